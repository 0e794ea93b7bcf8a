import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { expectedViesAnswer } from '../src/simulators/vies.js';
import { euNumbers } from '../test/helpers/batch-numbers.js';
import {
  ROOT,
  startService,
  startSimulatorProcess,
  today,
  updatePerformanceTable,
  writeResult,
} from './lib.js';

interface Job {
  status: string;
  results?: Array<{ ok: boolean; data?: { valid: boolean } }>;
}

/**
 * Three instances on one PostgreSQL database and one Redis, against the VIES simulator (150 ms per
 * call, 2 concurrent calls per member state, more are refused with MS_MAX_CONCURRENT_REQ), each
 * started with OPENVAT_REGISTRY_CONCURRENCY=2: a 10,000-number batch job and 1,000 concurrent
 * cache-miss `GET /v1/validate` spread over the instances, at the same time. The lower bound is the
 * same as for one instance: max over member states of calls × latency ÷ limit.
 */
export async function benchScale(
  options: { latencyMs?: number; limit?: number; jobSize?: number; validations?: number } = {},
) {
  const latencyMs = options.latencyMs ?? 150;
  const limit = options.limit ?? 2;
  const jobSize = options.jobSize ?? 10_000;
  const validations = options.validations ?? 1_000;
  const adminUrl =
    process.env.BENCH_DATABASE_URL ??
    process.env.TEST_DATABASE_URL ??
    'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const run = randomBytes(4).toString('hex');
  const database = `openvat_bench_${run}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  const databaseUrl = url.toString();

  const sim = await startSimulatorProcess(latencyMs);
  await sim.control({ concurrencyLimit: { '*': limit } });
  const env = {
    VIES_URL: sim.urls.VIES_URL,
    VIES_SOAP_URL: sim.urls.VIES_SOAP_URL,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    OPENVAT_REDIS_PREFIX: `openvat-bench:${run}:`,
    OPENVAT_REGISTRY_CONCURRENCY: String(limit),
    OPENVAT_STATUS_POLL_MS: '0',
    OPENVAT_PLAYGROUND: 'false',
  };
  const services: Array<Awaited<ReturnType<typeof startService>>> = [];
  try {
    for (let i = 0; i < 3; i++) services.push(await startService(env));
    const out = execFileSync(
      process.execPath,
      ['dist/cli/index.js', 'keys', 'create', '--plan', 'business', '--mode', 'live', '--json'],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl } },
    );
    const headers = { authorization: `Bearer ${(JSON.parse(out.toString()) as { key: string }).key}` };

    const all = euNumbers(Math.ceil((jobSize + validations) / 27), { offset: 40_000 }).slice(
      0,
      jobSize + validations,
    );
    const jobNumbers = all.slice(0, jobSize);
    const single = all.slice(jobSize);
    const perCountry = new Map<string, number>();
    for (const vat of all) perCountry.set(vat.slice(0, 2), (perCountry.get(vat.slice(0, 2)) ?? 0) + 1);
    const lowerBoundMs = Math.max(...[...perCountry.values()].map((n) => (n * latencyMs) / limit));
    await sim.control({ resetStats: true });

    const started = performance.now();
    const created = await fetch(`${services[0]?.url}/v1/validate/batch`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ vat_numbers: jobNumbers, async: true }),
    });
    if (created.status !== 202) throw new Error(`job not created: ${created.status} ${await created.text()}`);
    const { id } = ((await created.json()) as { data: { id: string } }).data;

    let validationErrors = 0;
    let falseInvalid = 0;
    let mismatches = 0;
    let validationsDoneMs = 0;
    const singles = Promise.all(
      single.map(async (vat, i) => {
        const res = await fetch(`${services[i % 3]?.url}/v1/validate?vat_number=${vat}`, { headers });
        const body = (await res.json()) as { data?: { valid: boolean } };
        const expected = expectedViesAnswer(vat.slice(0, 2), vat.slice(2));
        if (res.status !== 200 || !body.data) validationErrors += 1;
        else if ('valid' in expected) {
          if (expected.valid && !body.data.valid) falseInvalid += 1;
          if (body.data.valid !== expected.valid) mismatches += 1;
        }
      }),
    ).then(() => {
      validationsDoneMs = performance.now() - started;
    });

    let job: Job;
    for (;;) {
      const res = await fetch(`${services[(Date.now() % 3) as 0 | 1 | 2]?.url}/v1/validate/batch/${id}`, {
        headers,
      });
      job = ((await res.json()) as { data: Job }).data;
      if (job.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const jobDoneMs = performance.now() - started;
    await singles;
    const wallMs = performance.now() - started;

    let itemErrors = 0;
    (job.results ?? []).forEach((item, i) => {
      const vat = jobNumbers[i] as string;
      const expected = expectedViesAnswer(vat.slice(0, 2), vat.slice(2));
      if (!item.ok) {
        itemErrors += 1;
        return;
      }
      if (!('valid' in expected)) return;
      if (expected.valid && item.data?.valid === false) falseInvalid += 1;
      if (item.data?.valid !== expected.valid) mismatches += 1;
    });
    const stats = (
      (await sim.stats()) as {
        vies: { total: number; errors: Record<string, number>; maxConcurrencySeen: Record<string, number> };
      }
    ).vies;
    const ratio = Math.round((wallMs / lowerBoundMs) * 100) / 100;
    const rejections = Object.entries(stats.errors)
      .filter(([code]) => code.includes('CONCURRENT'))
      .reduce((n, [, c]) => n + c, 0);
    const result = {
      benchmark: `3 instances on PostgreSQL + Redis: a ${jobSize.toLocaleString('en')}-number job and ${validations.toLocaleString('en')} concurrent cache-miss validations over 27 countries, VIES simulator ${latencyMs} ms, ${limit} concurrent calls per country`,
      command: 'npm run bench -- scale',
      date: today(),
      node: process.version,
      instances: 3,
      numbers: all.length,
      countries: perCountry.size,
      wall_ms: Math.round(wallMs),
      job_done_ms: Math.round(jobDoneMs),
      validations_done_ms: Math.round(validationsDoneMs),
      lower_bound_ms: Math.round(lowerBoundMs),
      ratio,
      registry_calls: stats.total,
      registry_errors: stats.errors,
      concurrency_rejections: rejections,
      max_in_flight_per_country: Math.max(...Object.values(stats.maxConcurrencySeen)),
      item_errors: itemErrors,
      validation_errors: validationErrors,
      false_invalid: falseInvalid,
      mismatches,
      targets: { ratio: '<= 1.3', concurrency_rejections: 0, false_invalid: 0 },
      met:
        ratio <= 1.3 && rejections === 0 && falseInvalid === 0 && itemErrors === 0 && validationErrors === 0,
    };
    writeResult('scale', result);
    updatePerformanceTable(
      'scale',
      `| 3 instances (PostgreSQL + Redis): ${jobSize.toLocaleString('en')}-number job + ${validations.toLocaleString('en')} concurrent cache-miss validations over 27 countries, ${latencyMs} ms per call, ${limit} per country (${result.date}, \`${result.command}\`) | ${(wallMs / 1000).toFixed(1)} s, ${rejections} concurrency rejections, ${falseInvalid} false invalid | lower bound of the limits (as on one instance): ${(lowerBoundMs / 1000).toFixed(1)} s | **${ratio}×** (target ≤ 1.3) |`,
    );
    return result;
  } finally {
    for (const s of services) await s.stop();
    await sim.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {});
    await admin.end();
  }
}
