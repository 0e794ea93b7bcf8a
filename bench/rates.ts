import { load, loadBare, ratioOf, startService, today, updateReadme, warm, writeResult } from './lib.js';

/**
 * `GET /v1/rates/de` on the service against a bare `node:http` server answering the same bytes,
 * one after the other, 50 connections, each in its own single process.
 */
export async function benchRates(duration = 10) {
  const service = await startService();
  let serviceResult: Awaited<ReturnType<typeof load>>;
  let body: string;
  let headers: Record<string, string>;
  try {
    const sample = await fetch(`${service.url}/v1/rates/de`);
    body = await sample.text();
    headers = {
      'content-type': sample.headers.get('content-type') ?? 'application/json',
      etag: sample.headers.get('etag') ?? '',
      'cache-control': sample.headers.get('cache-control') ?? '',
      'service-request-id': sample.headers.get('service-request-id') ?? '',
    };
    await warm(`${service.url}/v1/rates/de`);
    serviceResult = await load(`${service.url}/v1/rates/de`, { connections: 50, duration });
  } finally {
    await service.stop();
  }
  const bareResult = await loadBare(body, headers, duration);
  const ratio = ratioOf(serviceResult, bareResult);
  const result = {
    benchmark: 'GET /v1/rates/de vs bare node:http with the same bytes',
    command: 'npm run bench -- rates',
    date: today(),
    node: process.version,
    connections: 50,
    duration_s: duration,
    body_bytes: Buffer.byteLength(body),
    service: serviceResult,
    bare: bareResult,
    ratio,
    targets: { ratio: '>= 0.8', p99_ms: '< 5' },
    met: ratio >= 0.8 && serviceResult.p99 < 5,
  };
  writeResult('rates', result);
  updateReadme(
    'rates',
    `| \`GET /v1/rates/de\` (${result.date}, \`${result.command}\`) | ${serviceResult.requestsPerSecond.toLocaleString('en')} req/s, p99 ${serviceResult.p99} ms | bare \`node:http\`: ${bareResult.requestsPerSecond.toLocaleString('en')} req/s, p99 ${bareResult.p99} ms | **${ratio}×** (target ≥ 0.8, p99 < 5 ms) |`,
  );
  return result;
}
