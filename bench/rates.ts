import {
  type LoadResult,
  load,
  median,
  startBare,
  startService,
  today,
  updatePerformanceTable,
  warm,
  writeResult,
} from './lib.js';

const ROUNDS = 6;

/**
 * `GET /v1/rates/de` on the service against a bare `node:http` server answering the same bytes, each
 * in its own single process, 50 connections. The two are loaded one after the other in alternating
 * rounds, so a drift in the machine's speed affects both alike; the ratio is the median of the
 * rounds' ratios.
 */
export async function benchRates(duration = 5) {
  const service = await startService();
  let bare: Awaited<ReturnType<typeof startBare>> | null = null;
  try {
    const url = `${service.url}/v1/rates/de`;
    const sample = await fetch(url);
    const body = await sample.text();
    bare = await startBare(body, {
      'content-type': sample.headers.get('content-type') ?? 'application/json',
      etag: sample.headers.get('etag') ?? '',
      'cache-control': sample.headers.get('cache-control') ?? '',
      'service-request-id': sample.headers.get('service-request-id') ?? '',
    });
    await warm(url);
    await warm(bare.url);
    const rounds: Array<{ service: LoadResult; bare: LoadResult; ratio: number }> = [];
    for (let i = 0; i < ROUNDS; i++) {
      const s = await load(url, { connections: 50, duration });
      const b = await load(bare.url, { connections: 50, duration });
      rounds.push({
        service: s,
        bare: b,
        ratio: Math.round((s.requestsPerSecond / b.requestsPerSecond) * 100) / 100,
      });
    }
    const ratio = Math.round(median(rounds.map((r) => r.ratio)) * 100) / 100;
    const serviceRps = Math.round(median(rounds.map((r) => r.service.requestsPerSecond)));
    const bareRps = Math.round(median(rounds.map((r) => r.bare.requestsPerSecond)));
    const serviceP99 = median(rounds.map((r) => r.service.p99));
    const bareP99 = median(rounds.map((r) => r.bare.p99));
    const result = {
      benchmark: 'GET /v1/rates/de vs bare node:http with the same bytes, alternating rounds',
      command: 'npm run bench -- rates',
      date: today(),
      node: process.version,
      connections: 50,
      rounds: ROUNDS,
      duration_per_round_s: duration,
      body_bytes: Buffer.byteLength(body),
      median: {
        service_rps: serviceRps,
        service_p99_ms: serviceP99,
        bare_rps: bareRps,
        bare_p99_ms: bareP99,
        ratio,
      },
      per_round: rounds,
      targets: { ratio: '>= 0.8', p99_ms: '< 5' },
      met: ratio >= 0.8 && serviceP99 < 5,
    };
    writeResult('rates', result);
    updatePerformanceTable(
      'rates',
      `| \`GET /v1/rates/de\` (${result.date}, \`${result.command}\`, median of ${ROUNDS} alternating rounds) | ${serviceRps.toLocaleString('en')} req/s, p99 ${serviceP99} ms | bare \`node:http\`: ${bareRps.toLocaleString('en')} req/s, p99 ${bareP99} ms | **${ratio}×** (target ≥ 0.8, p99 < 5 ms) |`,
    );
    return result;
  } finally {
    await bare?.stop();
    await service.stop();
  }
}
