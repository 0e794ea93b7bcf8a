import type { VatPrefix } from '../src/modules/vat-numbers/index.js';
import { createSimulatorServer } from '../src/simulators/server.js';
import { expectedViesAnswer } from '../src/simulators/vies.js';
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
import { wellFormedNumbers } from './numbers.js';

const COUNTRIES: VatPrefix[] = ['DE', 'FR', 'IT', 'ES', 'NL', 'BE', 'AT', 'PL', 'SE', 'DK'];
const PER_COUNTRY = 100;
const LATENCY_MS = 150;
const LIMIT = 2;

/**
 * 1,000 distinct numbers over 10 countries against the VIES simulator (150 ms latency, 2 concurrent
 * calls per country, 20% of German calls answered MS_MAX_CONCURRENT_REQ), all sent at once. Reports
 * wall time against the lower bound the limits allow, false "invalid" answers and upstream calls per
 * number; then cache-hit throughput with a live key against the bare node:http baseline.
 */
export async function benchRegistries(duration = 10) {
  const sim = createSimulatorServer({ latencyMs: LATENCY_MS, seed: 42 });
  const { urls } = await sim.listen(0, '127.0.0.1');
  sim.control({
    concurrencyLimit: { '*': LIMIT },
    errorRate: { DE: { rate: 0.2, code: 'MS_MAX_CONCURRENT_REQ' } },
  });
  const service = await startService({
    VIES_URL: urls.VIES_URL,
    VIES_SOAP_URL: urls.VIES_SOAP_URL,
    OPENVAT_REGISTRY_CONCURRENCY: String(LIMIT),
    OPENVAT_REGISTRY_DEADLINE_MS: '120000',
    // Every number is sent at once and waits its turn: the waits are bounded only by the idle timeout.
    OPENVAT_REGISTRY_PERMIT_WAIT_MS: '120000',
    OPENVAT_IDLE_TIMEOUT_MS: '300000',
    OPENVAT_STATUS_POLL_MS: '0',
  });
  try {
    const key = createKey(service.dataDir, 'business', 'live');
    const headers = { authorization: `Bearer ${key}` };
    const numbers = COUNTRIES.flatMap((c) => wellFormedNumbers(c, PER_COUNTRY, 3));
    const started = performance.now();
    const answers = await Promise.all(
      numbers.map(async (vat) => {
        const res = await fetch(`${service.url}/v1/validate?vat_number=${vat}`, { headers });
        return { vat, status: res.status, body: (await res.json()) as { data?: { valid: boolean } } };
      }),
    );
    const wallMs = performance.now() - started;
    const stats = (
      sim.stats() as {
        vies: { total: number; calls: Record<string, number>; rejections: Record<string, number> };
      }
    ).vies;
    let falseInvalid = 0;
    let wrong = 0;
    let failed = 0;
    for (const a of answers) {
      if (a.status !== 200 || !a.body.data) {
        failed += 1;
        continue;
      }
      const expected = expectedViesAnswer(a.vat.slice(0, 2), a.vat.slice(2));
      if (!('valid' in expected)) continue;
      if (expected.valid && !a.body.data.valid) falseInvalid += 1;
      if (expected.valid !== a.body.data.valid) wrong += 1;
    }
    // The bound the limits allow: every upstream call a country needed (retries of throttled calls
    // included) at its latency, `LIMIT` at a time; the slowest country sets the wall time.
    const lowerBoundMs = Math.max(...COUNTRIES.map((c) => ((stats.calls[c] ?? 0) * LATENCY_MS) / LIMIT));
    const naiveBoundMs = (PER_COUNTRY * LATENCY_MS) / LIMIT;
    const ratio = Math.round((wallMs / lowerBoundMs) * 100) / 100;

    // Cache hits with a live key: every number above is now stored.
    const hitUrl = `${service.url}/v1/validate?vat_number=${numbers[1]}`;
    const sample = await fetch(hitUrl, { headers });
    const sampleBody = await sample.text();
    await warm(hitUrl, headers);
    const hits = await load(hitUrl, { connections: 50, duration, headers });
    await service.stop();
    const bareResult = await loadBare(
      sampleBody,
      {
        'content-type': sample.headers.get('content-type') ?? 'application/json',
        'service-request-id': sample.headers.get('service-request-id') ?? '',
      },
      duration,
    );
    const hitRatio = ratioOf(hits, bareResult);

    const result = {
      benchmark: '1,000 numbers over 10 countries against the VIES simulator, then cache hits',
      command: 'npm run bench -- registries',
      date: today(),
      node: process.version,
      setup: {
        countries: COUNTRIES,
        per_country: PER_COUNTRY,
        latency_ms: LATENCY_MS,
        limit_per_country: LIMIT,
        de_throttled: 0.2,
      },
      wall_ms: Math.round(wallMs),
      lower_bound_ms: lowerBoundMs,
      lower_bound_without_retries_ms: naiveBoundMs,
      calls_per_country: stats.calls,
      ratio_to_lower_bound: ratio,
      false_invalid: falseInvalid,
      wrong_answers: wrong,
      failed_requests: failed,
      upstream_calls: stats.total,
      upstream_calls_per_number: Math.round((stats.total / numbers.length) * 100) / 100,
      upstream_rejections: stats.rejections,
      cache_hits: hits,
      bare: bareResult,
      cache_hit_ratio: hitRatio,
      targets: { ratio_to_lower_bound: '<= 1.3', false_invalid: 0 },
    };
    writeResult('registries', result);
    updatePerformanceTable(
      'registries',
      [
        `| 1,000 numbers / 10 countries, 150 ms, 2 per country, 20% DE throttled (${result.date}, \`${result.command}\`) | ${(wallMs / 1000).toFixed(2)} s, ${falseInvalid} false invalid, ${result.upstream_calls_per_number} calls/number | lower bound ${(lowerBoundMs / 1000).toFixed(2)} s (${(naiveBoundMs / 1000).toFixed(2)} s without the DE retries) | **${ratio}×** (target ≤ 1.3) |`,
        `| \`GET /v1/validate\` cache hit, live key (${result.date}) | ${hits.requestsPerSecond.toLocaleString('en')} req/s, p99 ${hits.p99} ms | bare: ${bareResult.requestsPerSecond.toLocaleString('en')} req/s | **${hitRatio}×** |`,
      ].join('\n'),
    );
    return result;
  } finally {
    await service.stop();
    await sim.close();
  }
}
