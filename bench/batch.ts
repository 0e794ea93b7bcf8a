import { expectedViesAnswer } from '../src/simulators/vies.js';
import { euNumbers } from '../test/helpers/batch-numbers.js';
import {
  createKey,
  startService,
  startSimulatorProcess,
  today,
  updatePerformanceTable,
  writeResult,
} from './lib.js';

interface Job {
  status: string;
  done: number;
  results?: Array<{ ok: boolean; data?: { vat_number: string; valid: boolean }; error?: { code: string } }>;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Math.round((sorted[Math.max(0, index)] as number) * 100) / 100;
}

/**
 * A 10,000-number batch job over the 27 member states against the VIES simulator (150 ms per call,
 * 2 concurrent calls per country, more are refused with MS_MAX_CONCURRENT_REQ), with the service
 * started with OPENVAT_REGISTRY_CONCURRENCY=2. Measures the wall time against the lower bound the
 * limits allow (max over countries of calls × latency ÷ limit), checks every answer against the
 * simulator's deterministic register, and samples single `GET /v1/validate` cache hits meanwhile.
 */
export async function benchBatch(
  options: { latencyMs?: number; perCountryLimit?: number; count?: number } = {},
) {
  const latencyMs = options.latencyMs ?? 150;
  const limit = options.perCountryLimit ?? 2;
  const count = options.count ?? 10_000;
  const sim = await startSimulatorProcess(latencyMs);
  await sim.control({ concurrencyLimit: { '*': limit } });
  const { urls } = sim;
  const service = await startService({
    VIES_URL: urls.VIES_URL,
    VIES_SOAP_URL: urls.VIES_SOAP_URL,
    OPENVAT_REGISTRY_CONCURRENCY: String(limit),
    OPENVAT_STATUS_POLL_MS: '0',
  });
  try {
    const key = createKey(service.dataDir, 'business', 'live');
    const headers = { authorization: `Bearer ${key}` };
    const numbers = euNumbers(Math.ceil(count / 27), { offset: 20_000 }).slice(0, count);
    const perCountry = new Map<string, number>();
    for (const vat of numbers) perCountry.set(vat.slice(0, 2), (perCountry.get(vat.slice(0, 2)) ?? 0) + 1);
    const lowerBoundMs = Math.max(...[...perCountry.values()].map((n) => (n * latencyMs) / limit));

    // A number answered once, so that later look-ups are cache hits.
    const warm = 'DE136695976';
    const first = await fetch(`${service.url}/v1/validate?vat_number=${warm}`, { headers });
    if (!first.ok) throw new Error(`warm-up failed: ${first.status} ${await first.text()}`);
    await sim.control({ resetStats: true });

    const started = performance.now();
    const created = await fetch(`${service.url}/v1/validate/batch`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ vat_numbers: numbers, async: true }),
    });
    if (created.status !== 202) throw new Error(`job not created: ${created.status} ${await created.text()}`);
    const { id } = ((await created.json()) as { data: { id: string } }).data;

    let finished = false;
    const latencies: number[] = [];
    const sampler = (async () => {
      while (!finished) {
        const t0 = performance.now();
        const res = await fetch(`${service.url}/v1/validate?vat_number=${warm}`, { headers });
        await res.arrayBuffer();
        if (res.ok) latencies.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    let job: Job;
    for (;;) {
      const res = await fetch(`${service.url}/v1/validate/batch/${id}`, { headers });
      job = ((await res.json()) as { data: Job }).data;
      if (job.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const wallMs = performance.now() - started;
    finished = true;
    await sampler;

    let falseInvalid = 0;
    let errors = 0;
    let mismatches = 0;
    (job.results ?? []).forEach((item, i) => {
      const vat = numbers[i] as string;
      const expected = expectedViesAnswer(vat.slice(0, 2), vat.slice(2));
      if (!item.ok) {
        errors += 1;
        return;
      }
      if (!('valid' in expected)) return;
      if (expected.valid && item.data?.valid === false) falseInvalid += 1;
      if (item.data?.valid !== expected.valid) mismatches += 1;
    });
    const stats = ((await sim.stats()) as { vies: { total: number; errors: Record<string, number> } }).vies;
    latencies.sort((a, b) => a - b);
    const ratio = Math.round((wallMs / lowerBoundMs) * 100) / 100;
    const p99 = percentile(latencies, 99);
    const result = {
      benchmark: `batch job of ${count.toLocaleString('en')} numbers over 27 countries, VIES simulator ${latencyMs} ms, ${limit} concurrent calls per country`,
      command: 'npm run bench -- batch',
      date: today(),
      node: process.version,
      numbers: count,
      countries: perCountry.size,
      wall_ms: Math.round(wallMs),
      lower_bound_ms: Math.round(lowerBoundMs),
      ratio,
      registry_calls: stats.total,
      registry_errors: stats.errors,
      item_errors: errors,
      false_invalid: falseInvalid,
      mismatches,
      cache_hits_during_job: {
        samples: latencies.length,
        p50_ms: percentile(latencies, 50),
        p99_ms: p99,
        max_ms: percentile(latencies, 100),
      },
      targets: { ratio: '<= 1.3', false_invalid: 0, cache_hit_p99_ms: '< 20' },
      met: ratio <= 1.3 && falseInvalid === 0 && errors === 0 && p99 < 20,
    };
    writeResult('batch', result);
    updatePerformanceTable(
      'batch',
      `| Batch job, ${count.toLocaleString('en')} numbers over 27 countries, ${latencyMs} ms per call, ${limit} per country (${result.date}, \`${result.command}\`) | ${(wallMs / 1000).toFixed(1)} s, ${falseInvalid} false invalid, ${errors} item errors; cache-hit \`GET /v1/validate\` meanwhile p99 ${p99} ms | lower bound of the limits: ${(lowerBoundMs / 1000).toFixed(1)} s | **${ratio}×** (target ≤ 1.3, p99 < 20 ms) |`,
    );
    return result;
  } finally {
    await service.stop();
    await sim.stop();
  }
}
