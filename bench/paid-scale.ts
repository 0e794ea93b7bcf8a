import { randomBytes } from 'node:crypto';
import {
  envNumber,
  type LoadResult,
  load,
  startService,
  startSimulatorProcess,
  today,
  updatePerformanceTable,
  warm,
  writeResult,
} from './lib.js';
import {
  CALLS,
  type Call,
  CONNECTIONS,
  callRequest,
  createKeyOn,
  machineTicks,
  mainThreadCpuMs,
  medianBy,
  primeCall,
  scratchPostgres,
} from './paid-calls.js';

type Service = Awaited<ReturnType<typeof startService>>;

interface Side {
  requestsPerSecond: number;
  /** The highest p50 and p99 of the load generators (one per instance). */
  p50: number;
  p99: number;
  total: number;
  /** Per instance loaded: the share of the round its main thread was busy. */
  main_thread_busy: Array<number | null>;
  /** Share of the machine's CPU time that was idle during the round (Linux), else null. */
  machine_idle: number | null;
}

interface Round {
  one: Side;
  two: Side;
  ratio: number;
}

/**
 * A call's load spread over `services`, CONNECTIONS in all (50 on one, 25 on each of two), one
 * autocannon per instance, all at once in this process; their requests per second are summed.
 */
async function loadOver(
  services: Service[],
  call: Call,
  keys: Record<'live' | 'test', string>,
  seconds: number,
): Promise<Side> {
  const { headers, request } = callRequest(call, keys);
  const cpuBefore = services.map((s) => mainThreadCpuMs(s.process.pid));
  const machineBefore = machineTicks();
  const startedAt = performance.now();
  const results: LoadResult[] = await Promise.all(
    services.map((s) =>
      load(`${s.url}${call.path}`, {
        connections: CONNECTIONS / services.length,
        duration: seconds,
        headers,
        ...request,
      }),
    ),
  );
  const elapsedMs = performance.now() - startedAt;
  const machineAfter = machineTicks();
  const cpuAfter = services.map((s) => mainThreadCpuMs(s.process.pid));
  for (const r of results) {
    if (r.non2xx || r.errors) throw new Error(`${call.name}: ${JSON.stringify(r)}`);
  }
  return {
    requestsPerSecond: results.reduce((a, r) => a + r.requestsPerSecond, 0),
    p50: Math.max(...results.map((r) => r.p50)),
    p99: Math.max(...results.map((r) => r.p99)),
    total: results.reduce((a, r) => a + r.total, 0),
    main_thread_busy: services.map((_, i) => {
      const before = cpuBefore[i];
      const after = cpuAfter[i];
      if (before === null || before === undefined || after === null || after === undefined) return null;
      return Math.round(((after - before) / elapsedMs) * 100) / 100;
    }),
    machine_idle:
      machineBefore === null || machineAfter === null
        ? null
        : Math.round(
            ((machineAfter.idle - machineBefore.idle) / (machineAfter.total - machineBefore.total)) * 100,
          ) / 100,
  };
}

const percent = (share: number | null) => (share === null ? '?' : `${Math.round(share * 100)}%`);

/** "12,000 req/s, p99 9 ms; main thread 60% busy, machine 10% idle". */
function describe(side: Side): string {
  const busy = side.main_thread_busy.map(percent).join(' and ');
  const threads = side.main_thread_busy.length > 1 ? 'main threads' : 'main thread';
  return (
    `${side.requestsPerSecond.toLocaleString('en')} req/s, p99 ${side.p99} ms; ${threads} ${busy} busy` +
    (side.machine_idle === null ? '' : `, machine ${percent(side.machine_idle)} idle`)
  );
}

/**
 * The paid calls on PostgreSQL + Redis (BENCH_POSTGRES_URL in a scratch database of its own,
 * BENCH_REDIS_URL under a key prefix of its own): one instance against two, in PAID_SCALE_ROUNDS (3)
 * alternating rounds of PAID_SCALE_SECONDS (5) per call. Both instances run throughout; a round
 * loads the first alone with 50 connections, then both with 25 each. Reported: the round with the
 * median ratio of two instances' req/s to one's.
 */
export async function benchPaidScale() {
  const seconds = envNumber('PAID_SCALE_SECONDS', 5);
  const rounds = Math.round(envNumber('PAID_SCALE_ROUNDS', 3));
  const postgresUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const simulator = await startSimulatorProcess(0);
  const services: Service[] = [];
  const measured: Array<{ call: Call; rounds: Round[] }> = [];
  let scratch: Awaited<ReturnType<typeof scratchPostgres>> | null = null;
  try {
    scratch = await scratchPostgres(postgresUrl, 'paid_scale');
    const env = {
      ...simulator.urls,
      DATABASE_URL: scratch.url,
      REDIS_URL: redisUrl,
      OPENVAT_REDIS_PREFIX: `openvat-bench:${randomBytes(4).toString('hex')}:`,
      OPENVAT_STATUS_POLL_MS: '0',
    };
    // One after the other: the first migrates the database.
    for (let i = 0; i < 2; i++) services.push(await startService(env));
    const keys = { live: createKeyOn(scratch.url, 'live'), test: createKeyOn(scratch.url, 'test') };
    for (const call of CALLS) {
      const { headers, request } = callRequest(call, keys);
      for (const s of services) {
        await primeCall(s.url, call, keys);
        await warm(`${s.url}${call.path}`, headers, request);
      }
      const done: Round[] = [];
      for (let i = 0; i < rounds; i++) {
        const one = await loadOver(services.slice(0, 1), call, keys, seconds);
        const two = await loadOver(services, call, keys, seconds);
        done.push({
          one,
          two,
          ratio: Math.round((two.requestsPerSecond / one.requestsPerSecond) * 100) / 100,
        });
      }
      measured.push({ call, rounds: done });
    }
  } finally {
    for (const s of services) await s.stop();
    await simulator.stop();
    await scratch?.drop();
  }

  const figures = measured.map(({ call, rounds: done }) => {
    const m = medianBy(done, (r) => r.ratio);
    return {
      call: call.name,
      title: call.title,
      one_instance: m.one,
      two_instances: m.two,
      ratio: m.ratio,
      rounds: done.map((r) => r.ratio),
      all_rounds: done,
    };
  });
  const result = {
    benchmark:
      'The paid calls on PostgreSQL + Redis: two instances against one (validate live cache hit, validate test key, decide)',
    command: 'npm run bench -- paid-scale',
    date: today(),
    node: process.version,
    connections: CONNECTIONS,
    rounds,
    duration_per_round_s: seconds,
    note: "Per call, alternating rounds: the first instance alone with 50 connections, then both instances with 25 connections each (one autocannon per instance, run together in one process; req/s summed, p50 and p99 the higher of the two). The figures are those of the round with the median ratio. PostgreSQL, Redis, the load generator and both instances share the machine's cores, so the ratio mostly shows their contention, not how far more machines would carry the load.",
    figures,
  };
  writeResult('paid-scale', result);
  updatePerformanceTable(
    'paid-scale',
    figures
      .map(
        (f) =>
          `| ${f.title}, PostgreSQL + Redis, 2 instances against 1 (${result.date}, \`${result.command}\`, ${CONNECTIONS} connections, 25 on each of 2; median of ${rounds} alternating rounds: ${f.rounds.join(', ')}) | 2 instances: ${describe(f.two_instances)} | 1 instance: ${describe(f.one_instance)} | **${f.ratio}×** (no target; the same cores) |`,
      )
      .join('\n'),
  );
  return result;
}
