import {
  createKey,
  load,
  loadBare,
  ratioOf,
  startService,
  today,
  updatePerformanceTable,
  warm,
  writeResult,
} from './lib.js';

const BODY = JSON.stringify({
  seller_vat: 'DE136308783',
  buyer_vat: 'FR40303265045',
  supply_type: 'services',
});

/**
 * `POST /v1/decide` (B2B reverse charge, two look-ups, one audit record per call) with a test
 * Business key on warm caches, against a bare `node:http` server answering the same bytes; 50
 * connections, each server in its own single process, one after the other.
 */
export async function benchDecide(duration = 10) {
  const service = await startService();
  let serviceResult: Awaited<ReturnType<typeof load>>;
  let body: string;
  let headers: Record<string, string>;
  try {
    const key = createKey(service.dataDir, 'business', 'test');
    const request = {
      method: 'POST' as const,
      body: BODY,
    };
    const requestHeaders = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const sample = await fetch(`${service.url}/v1/decide`, { ...request, headers: requestHeaders });
    body = await sample.text();
    if (!sample.ok) throw new Error(`decide answered ${sample.status}: ${body}`);
    headers = {
      'content-type': sample.headers.get('content-type') ?? 'application/json',
      'service-request-id': sample.headers.get('service-request-id') ?? '',
    };
    await warm(`${service.url}/v1/decide`, requestHeaders, request);
    serviceResult = await load(`${service.url}/v1/decide`, {
      connections: 50,
      duration,
      headers: requestHeaders,
      ...request,
    });
  } finally {
    await service.stop();
  }
  const bareResult = await loadBare(body, headers, duration);
  const ratio = ratioOf(serviceResult, bareResult);
  const result = {
    benchmark: 'POST /v1/decide (test Business key, warm) vs bare node:http with the same bytes',
    command: 'npm run bench -- decide',
    date: today(),
    node: process.version,
    connections: 50,
    duration_s: duration,
    request_body: BODY,
    body_bytes: Buffer.byteLength(body),
    service: serviceResult,
    bare: bareResult,
    ratio,
  };
  writeResult('decide', result);
  updatePerformanceTable(
    'decide',
    `| \`POST /v1/decide\`, B2B, test key, audited (${result.date}, \`${result.command}\`) | ${serviceResult.requestsPerSecond.toLocaleString('en')} req/s, p99 ${serviceResult.p99} ms | bare \`node:http\`: ${bareResult.requestsPerSecond.toLocaleString('en')} req/s, p99 ${bareResult.p99} ms | **${ratio}×** |`,
  );
  return result;
}
