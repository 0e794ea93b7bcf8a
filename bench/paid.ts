import {
  type Child,
  type LoadResult,
  load,
  startBare,
  startScript,
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
  cores,
  createKeyOn,
  machineTicks,
  mainThreadCpuMs,
  medianBy,
  primeCall,
  replayableHeaders,
  scratchPostgres,
} from './paid-calls.js';

/** Rounds of each call, alternating between the service and its bare server. */
const ROUNDS = 3;

interface Round {
  service: LoadResult & {
    /** CPU time of the service's main thread (the event loop) per request, and its share of the round. */
    main_thread_us_per_request: number | null;
    main_thread_busy: number | null;
    /** Cores the load generator (this process) used meanwhile. */
    load_generator_cores: number;
    /** Share of the machine's CPU time that was idle meanwhile (Linux), else null. */
    machine_idle: number | null;
  };
  bare: LoadResult & { load_generator_cores: number };
  ratio: number;
  /** The durable floors of the round (SQLite runs only): see bench/durable-floor.ts. */
  floors?: Record<FloorWriter, FloorRound>;
}

/** A durable floor's load in a round, its ratio to the round's bare server and its main thread's CPU time. */
interface FloorRound {
  load: LoadResult;
  ratio: number;
  main_thread_us_per_request: number | null;
}

/** Where the durable floor commits its records: on the event loop, or on a thread of its own. */
type FloorWriter = 'event-loop' | 'thread';
const FLOOR_WRITERS: FloorWriter[] = ['event-loop', 'thread'];

interface Measured {
  /** The median round by ratio (its figures are reported), and every round. */
  median: Round;
  rounds: Round[];
  body: string;
  /** Per floor writer, the round with the median floor ratio (SQLite runs only). */
  floors: Record<FloorWriter, FloorRound & { rounds: number[] }> | null;
}

/** ", main thread 22 µs CPU per request" when measured. */
const cpu = (us: number | null) => (us === null ? '' : `, main thread ${us} µs CPU per request`);

const floorFigures = (f: FloorRound & { rounds: number[] }) => ({
  ...f.load,
  ratio: f.ratio,
  main_thread_us_per_request: f.main_thread_us_per_request,
  rounds: f.rounds,
});

/** ", main thread 94% busy, 60 µs per request" when measured. */
const mainThread = (s: Round['service']) =>
  (s.main_thread_busy === null
    ? ''
    : `; main thread ${Math.round(s.main_thread_busy * 100)}% busy, ${s.main_thread_us_per_request} µs CPU per request`) +
  `; load generator ${s.load_generator_cores} cores` +
  (s.machine_idle === null ? '' : `, machine ${Math.round(s.machine_idle * 100)}% idle`);

const ratio = (a: LoadResult, b: LoadResult) =>
  Math.round((a.requestsPerSecond / b.requestsPerSecond) * 100) / 100;

/**
 * One call: a sample answer, a bare `node:http` server answering its bytes and headers, then
 * ROUNDS rounds of load alternating between the service and the bare server, so a slower moment of
 * a shared host weighs on both sides of a round's ratio.
 */
async function measureCall(
  service: Child,
  keys: Record<'live' | 'test', string>,
  call: Call,
  duration: number,
  withFloors: boolean,
): Promise<Measured> {
  const url = `${service.url}${call.path}`;
  const { headers, request } = callRequest(call, keys);
  const { body, headers: sampleHeaders } = await primeCall(service.url, call, keys);
  const bare = await startBare(body, replayableHeaders(sampleHeaders));
  const floors: Partial<Record<FloorWriter, Child>> = {};
  try {
    if (withFloors) {
      for (const writer of FLOOR_WRITERS) {
        floors[writer] = await startScript('durable-floor.ts', {
          BODY: body,
          HEADERS: JSON.stringify(replayableHeaders(sampleHeaders)),
          WRITER: writer,
        });
      }
    }
    await warm(url, headers, request);
    await warm(bare.url);
    for (const floor of Object.values(floors)) await warm(floor.url, {}, request);
    const rounds: Round[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const cpuBefore = mainThreadCpuMs(service.process.pid);
      const machineBefore = machineTicks();
      const generatorBefore = process.cpuUsage();
      const startedAt = performance.now();
      const s = await load(url, { connections: CONNECTIONS, duration, headers, ...request });
      const elapsedMs = performance.now() - startedAt;
      const generatorCores = cores(process.cpuUsage(generatorBefore), startedAt);
      const machineAfter = machineTicks();
      const cpuAfter = mainThreadCpuMs(service.process.pid);
      if (s.non2xx || s.errors) throw new Error(`${call.name}: ${JSON.stringify(s)}`);
      const cpuMs = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
      const bareGenerator = process.cpuUsage();
      const bareStartedAt = performance.now();
      const bareLoad = await load(bare.url, { connections: CONNECTIONS, duration });
      const b = { ...bareLoad, load_generator_cores: cores(process.cpuUsage(bareGenerator), bareStartedAt) };
      const floorLoads: Round['floors'] = withFloors ? ({} as NonNullable<Round['floors']>) : undefined;
      for (const writer of FLOOR_WRITERS) {
        const floor = floors[writer];
        if (!floor || !floorLoads) continue;
        const before = mainThreadCpuMs(floor.process.pid);
        const f = await load(floor.url, { connections: CONNECTIONS, duration, ...request });
        const after = mainThreadCpuMs(floor.process.pid);
        if (f.non2xx || f.errors) throw new Error(`${call.name}, floor ${writer}: ${JSON.stringify(f)}`);
        const usPerRequest =
          before === null || after === null ? null : Math.round(((after - before) * 1000) / f.total);
        floorLoads[writer] = { load: f, ratio: ratio(f, b), main_thread_us_per_request: usPerRequest };
      }
      rounds.push({
        service: {
          ...s,
          main_thread_us_per_request: cpuMs === null ? null : Math.round((cpuMs * 1000) / s.total),
          main_thread_busy: cpuMs === null ? null : Math.round((cpuMs / elapsedMs) * 100) / 100,
          load_generator_cores: generatorCores,
          machine_idle:
            machineBefore === null || machineAfter === null
              ? null
              : Math.round(
                  ((machineAfter.idle - machineBefore.idle) / (machineAfter.total - machineBefore.total)) *
                    100,
                ) / 100,
        },
        bare: b,
        ratio: ratio(s, b),
        ...(floorLoads ? { floors: floorLoads } : {}),
      });
    }
    const floorMedians = withFloors
      ? (Object.fromEntries(
          FLOOR_WRITERS.map((writer) => {
            const of = (r: Round) => r.floors?.[writer] as FloorRound;
            const m = of(medianBy(rounds, (r) => of(r).ratio));
            return [writer, { ...m, rounds: rounds.map((r) => of(r).ratio) }];
          }),
        ) as Measured['floors'])
      : null;
    return { median: medianBy(rounds, (r) => r.ratio), rounds, body, floors: floorMedians };
  } finally {
    await bare.stop();
    for (const floor of Object.values(floors)) await floor.stop();
  }
}

async function runService(
  databaseUrl: string | null,
  simulatorUrls: Record<string, string>,
  duration: number,
): Promise<Record<Call['name'], Measured>> {
  const service = await startService({
    ...simulatorUrls,
    OPENVAT_STATUS_POLL_MS: '0',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  try {
    const url = databaseUrl ?? `sqlite:${service.dataDir}/openvat.sqlite`;
    const keys = { live: createKeyOn(url, 'live'), test: createKeyOn(url, 'test') };
    const out = {} as Record<Call['name'], Measured>;
    // The floors are SQLite's: measured beside the service on SQLite only.
    for (const call of CALLS) {
      out[call.name] = await measureCall(service, keys, call, duration, databaseUrl === null);
    }
    return out;
  } finally {
    await service.stop();
  }
}

/**
 * The paid request path: a cache hit with a live key (audit record and event written per call), a
 * test-key validation and a B2B decide (audit record per call), each in ROUNDS rounds alternating
 * with a bare `node:http` server answering that call's bytes and headers, 50 connections, the
 * compiled service at `LOG_LEVEL=warn` on SQLite; then the same with the service on PostgreSQL (with
 * BENCH_POSTGRES_URL, in a database of its own). Reported: the round with the median ratio.
 */
export async function benchPaid(duration = 5) {
  const simulator = await startSimulatorProcess(0);
  let sqlite: Record<Call['name'], Measured>;
  let postgres: Record<Call['name'], Measured> | null = null;
  try {
    sqlite = await runService(null, simulator.urls, duration);
    const pgUrl = process.env.BENCH_POSTGRES_URL;
    if (pgUrl) {
      const scratch = await scratchPostgres(pgUrl);
      try {
        postgres = await runService(scratch.url, simulator.urls, duration);
      } finally {
        await scratch.drop();
      }
    }
  } finally {
    await simulator.stop();
  }
  const figures = CALLS.map((call) => {
    const s = sqlite[call.name];
    const p = postgres?.[call.name] ?? null;
    return {
      call: call.name,
      title: call.title,
      body_bytes: Buffer.byteLength(s.body),
      target: { ratio: `>= ${call.target.ratio}`, p99_ms: `< ${call.target.p99Ms}` },
      sqlite: { ...s.median.service, ratio: s.median.ratio },
      bare: s.median.bare,
      met: s.median.ratio >= call.target.ratio && s.median.service.p99 < call.target.p99Ms,
      sqlite_rounds: s.rounds.map((r) => r.ratio),
      postgres: p ? { ...p.median.service, ratio: p.median.ratio, bare: p.median.bare } : null,
      postgres_rounds: p ? p.rounds.map((r) => r.ratio) : null,
      floors: s.floors
        ? {
            event_loop: floorFigures(s.floors['event-loop']),
            thread: floorFigures(s.floors.thread),
            // The service against the floor that commits on the event loop, as it does, per round.
            service_to_floor_rounds: s.rounds.map((r) =>
              ratio(r.service, r.floors?.['event-loop']?.load as LoadResult),
            ),
          }
        : null,
    };
  });
  const result = {
    benchmark: 'The paid request path (validate live cache hit, validate test key, decide) vs bare node:http',
    command: 'npm run bench -- paid',
    date: today(),
    node: process.version,
    connections: CONNECTIONS,
    rounds: ROUNDS,
    duration_per_round_s: duration,
    note: "Per call and database: the service and a bare server answering the call's bytes and headers, in alternating rounds; the figures are those of the round with the median ratio. Targets apply to SQLite. On SQLite each round also measures the durable floor (bench/durable-floor.ts): a bare server answering the same bytes only after committing an audit record of them, committing on the event loop or on a writer thread.",
    figures,
  };
  writeResult('paid', result);
  const rows = figures.flatMap((f) => {
    const row = [
      `| ${f.title}, SQLite (${result.date}, \`${result.command}\`, median of ${ROUNDS} alternating rounds: ${f.sqlite_rounds.join(', ')}) | ${f.sqlite.requestsPerSecond.toLocaleString('en')} req/s, p99 ${f.sqlite.p99} ms${mainThread(f.sqlite)} | bare \`node:http\`: ${f.bare.requestsPerSecond.toLocaleString('en')} req/s, p99 ${f.bare.p99} ms; load generator ${f.bare.load_generator_cores} cores | **${f.sqlite.ratio}×** (target ${f.target.ratio.replace('>= ', '≥ ')}, p99 ${f.target.p99_ms} ms: ${f.met ? 'met' : 'not met'}) |`,
    ];
    if (f.floors) {
      const { event_loop: loop, thread } = f.floors;
      const ofFloor = medianBy(f.floors.service_to_floor_rounds, (r) => r);
      row.push(
        `| ${f.title}: the durable floor, bare \`node:http\` answering the same bytes after committing an audit record of them, nothing else (\`bench/durable-floor.ts\`), SQLite (${result.date}, same run, rounds: ${loop.rounds.join(', ')}; writer thread: ${thread.rounds.join(', ')}) | commits on the event loop: ${loop.requestsPerSecond.toLocaleString('en')} req/s, p99 ${loop.p99} ms${cpu(loop.main_thread_us_per_request)}; on a writer thread: ${thread.requestsPerSecond.toLocaleString('en')} req/s, p99 ${thread.p99} ms${cpu(thread.main_thread_us_per_request)} | bare \`node:http\` (same rounds) | **${loop.ratio}×** and **${thread.ratio}×**; openvat reaches ${ofFloor}× of the first (rounds: ${f.floors.service_to_floor_rounds.join(', ')}) |`,
      );
    }
    if (f.postgres) {
      row.push(
        `| ${f.title}, PostgreSQL (${result.date}, same run, rounds: ${f.postgres_rounds?.join(', ')}) | ${f.postgres.requestsPerSecond.toLocaleString('en')} req/s, p99 ${f.postgres.p99} ms${mainThread(f.postgres)} | bare \`node:http\`: ${f.postgres.bare.requestsPerSecond.toLocaleString('en')} req/s | **${f.postgres.ratio}×** (no target) |`,
      );
    }
    return row;
  });
  updatePerformanceTable('paid', rows.join('\n'));
  return result;
}
