import {
  type Child,
  envNumber,
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
    /**
     * The ratio to the floor this round would reach if the machine's idle share also served requests,
     * at the round's CPU cost per request (the service's threads, the load generator and the kernel):
     * to_floor ÷ (1 − machine_idle). An upper bound for spreading the same work over more threads or
     * processes on this machine; null without the idle share.
     */
    machine_bound: number | null;
  };
  bare: LoadResult & { load_generator_cores: number };
  /** openvat ÷ the bare server. */
  ratio: number;
  /** openvat ÷ the durable floor that commits on the event loop, as openvat does: the target's ratio. */
  to_floor: number;
  /** The durable floors of the round: see bench/durable-floor.ts. */
  floors: Partial<Record<FloorWriter, FloorRound>>;
}

/** A durable floor's load in a round, its ratio to the round's bare server and its main thread's CPU time. */
interface FloorRound {
  load: LoadResult;
  ratio: number;
  main_thread_us_per_request: number | null;
}

/** Where the durable floor commits its records: on the event loop, or on a thread of its own (SQLite only). */
type FloorWriter = 'event-loop' | 'thread';

/** The durable floors measured beside the service on a database, and what their processes need to use it. */
interface Floors {
  writers: FloorWriter[];
  env: Record<string, string>;
}

interface Measured {
  /** The round with the median ratio to the floor (its figures are reported), and every round. */
  median: Round;
  rounds: Round[];
  body: string;
  /** Per floor writer, the round with the median floor ratio to the bare server. */
  floors: Partial<Record<FloorWriter, FloorRound & { rounds: number[] }>>;
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
  (s.machine_idle === null ? '' : `, machine ${Math.round(s.machine_idle * 100)}% idle`) +
  (s.machine_bound === null
    ? ''
    : ` (all of the machine at the same cost per request: at most ${s.machine_bound}× the floor)`);

const ratio = (a: LoadResult, b: LoadResult) =>
  Math.round((a.requestsPerSecond / b.requestsPerSecond) * 100) / 100;

/**
 * One call: a sample answer, a bare `node:http` server answering its bytes and headers and the
 * durable floors answering them after a commit, then ROUNDS rounds of load alternating between the
 * service, the bare server and the floors, so a slower moment of a shared host weighs on every side
 * of a round's ratios.
 */
async function measureCall(
  service: Child,
  keys: Record<'live' | 'test', string>,
  call: Call,
  duration: number,
  floorsOf: Floors,
): Promise<Measured> {
  const url = `${service.url}${call.path}`;
  const { headers, request } = callRequest(call, keys);
  const { body, headers: sampleHeaders } = await primeCall(service.url, call, keys);
  const bare = await startBare(body, replayableHeaders(sampleHeaders));
  const floors: Partial<Record<FloorWriter, Child>> = {};
  try {
    for (const writer of floorsOf.writers) {
      floors[writer] = await startScript('durable-floor.ts', {
        ...floorsOf.env,
        BODY: body,
        HEADERS: JSON.stringify(replayableHeaders(sampleHeaders)),
        WRITER: writer,
      });
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
      const floorLoads: Round['floors'] = {};
      for (const writer of floorsOf.writers) {
        const floor = floors[writer] as Child;
        const before = mainThreadCpuMs(floor.process.pid);
        const f = await load(floor.url, { connections: CONNECTIONS, duration, ...request });
        const after = mainThreadCpuMs(floor.process.pid);
        if (f.non2xx || f.errors) throw new Error(`${call.name}, floor ${writer}: ${JSON.stringify(f)}`);
        const usPerRequest =
          before === null || after === null ? null : Math.round(((after - before) * 1000) / f.total);
        floorLoads[writer] = { load: f, ratio: ratio(f, b), main_thread_us_per_request: usPerRequest };
      }
      const machineIdle =
        machineBefore === null || machineAfter === null
          ? null
          : Math.round(
              ((machineAfter.idle - machineBefore.idle) / (machineAfter.total - machineBefore.total)) * 100,
            ) / 100;
      const toFloor = ratio(s, (floorLoads['event-loop'] as FloorRound).load);
      rounds.push({
        service: {
          ...s,
          main_thread_us_per_request: cpuMs === null ? null : Math.round((cpuMs * 1000) / s.total),
          main_thread_busy: cpuMs === null ? null : Math.round((cpuMs / elapsedMs) * 100) / 100,
          load_generator_cores: generatorCores,
          machine_idle: machineIdle,
          machine_bound:
            machineIdle === null || machineIdle >= 1
              ? null
              : Math.round((toFloor / (1 - machineIdle)) * 100) / 100,
        },
        bare: b,
        ratio: ratio(s, b),
        to_floor: toFloor,
        floors: floorLoads,
      });
    }
    const floorMedians: Measured['floors'] = {};
    for (const writer of floorsOf.writers) {
      const of = (r: Round) => r.floors[writer] as FloorRound;
      const m = of(medianBy(rounds, (r) => of(r).ratio));
      floorMedians[writer] = { ...m, rounds: rounds.map((r) => of(r).ratio) };
    }
    return { median: medianBy(rounds, (r) => r.to_floor), rounds, body, floors: floorMedians };
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
    // On SQLite the floors commit to a file of their own, on the event loop and on a writer thread;
    // on PostgreSQL to a schema of their own in the service's database, on the event loop.
    const floors: Floors = databaseUrl
      ? { writers: ['event-loop'], env: { DATABASE_URL: databaseUrl } }
      : { writers: ['event-loop', 'thread'], env: { DATABASE_URL: '' } };
    const out = {} as Record<Call['name'], Measured>;
    for (const call of CALLS) {
      out[call.name] = await measureCall(service, keys, call, duration, floors);
    }
    return out;
  } finally {
    await service.stop();
  }
}

/** A call's figures on one database: the median round's, its ratios to the floor and to bare, the target's verdict. */
function onDatabase(m: Measured, call: Call) {
  const { service, bare, to_floor, ratio: toBare, floors } = m.median;
  return {
    ...service,
    ratio_to_floor: to_floor,
    met: to_floor >= call.target.ratio && service.p99 < call.target.p99Ms,
    ratio_to_bare: toBare,
    rounds_to_floor: m.rounds.map((r) => r.to_floor),
    rounds_to_bare: m.rounds.map((r) => r.ratio),
    /** The floor that commits on the event loop, in the median round (the target's denominator). */
    floor: (floors['event-loop'] as FloorRound).load,
    bare,
    /** Each floor's own median round against the bare server. */
    floors: {
      event_loop: floorFigures(m.floors['event-loop'] as FloorRound & { rounds: number[] }),
      ...(m.floors.thread ? { thread: floorFigures(m.floors.thread) } : {}),
    },
  };
}
type OnDatabase = ReturnType<typeof onDatabase>;

const DATABASES = { sqlite: 'SQLite', postgres: 'PostgreSQL' } as const;

/** A call's two rows on one database: openvat against the floor, then the floors against bare. */
function rowsOf(
  f: { title: string; target: { ratio: string; p99_ms: string } },
  database: keyof typeof DATABASES,
  d: OnDatabase,
  date: string,
  command: string,
): string[] {
  const name = DATABASES[database];
  const rps = (l: LoadResult) => `${l.requestsPerSecond.toLocaleString('en')} req/s, p99 ${l.p99} ms`;
  const target = `target ${f.target.ratio.replace('>= ', '≥ ')}, p99 ${f.target.p99_ms} ms: ${d.met ? 'met' : 'not met'}`;
  const source =
    database === 'sqlite'
      ? `${date}, \`${command}\`, median of ${ROUNDS} alternating rounds`
      : `${date}, same run, median of ${ROUNDS} alternating rounds`;
  const { event_loop: loop, thread } = d.floors;
  const floorWhat =
    database === 'sqlite'
      ? `commits on the event loop: ${rps(loop)}${cpu(loop.main_thread_us_per_request)}${thread ? `; on a writer thread: ${rps(thread)}${cpu(thread.main_thread_us_per_request)}` : ''}`
      : `commits on the event loop, one multi-row \`INSERT\` per group: ${rps(loop)}${cpu(loop.main_thread_us_per_request)}`;
  const floorRatios = thread ? `**${loop.ratio}×** and **${thread.ratio}×**` : `**${loop.ratio}×**`;
  return [
    `| ${f.title}, ${name} (${source}) | ${rps(d)}${mainThread(d)} | durable floor (event loop, same round): ${rps(d.floor)} | **${d.ratio_to_floor}× the floor** (rounds: ${d.rounds_to_floor.join(', ')}; ${target}); ${d.ratio_to_bare}× bare \`node:http\` (rounds: ${d.rounds_to_bare.join(', ')}) |`,
    `| ${f.title}: the durable floor, bare \`node:http\` answering the same bytes after committing an audit record of them, nothing else (\`bench/durable-floor.ts\`), ${name} (${date}, same run, rounds: ${loop.rounds.join(', ')}${thread ? `; writer thread: ${thread.rounds.join(', ')}` : ''}) | ${floorWhat} | bare \`node:http\` (same rounds): ${rps(d.bare)}; load generator ${d.bare.load_generator_cores} cores | ${floorRatios} |`,
  ];
}

/**
 * The paid request path: a cache hit with a live key (audit record and event written per call), a
 * test-key validation and a B2B decide (audit record per call), each in ROUNDS rounds alternating
 * with a bare `node:http` server answering that call's bytes and headers and with the durable floor
 * (bench/durable-floor.ts), 50 connections, the compiled service at `LOG_LEVEL=warn` on SQLite; then
 * the same with the service and the floor on PostgreSQL (with BENCH_POSTGRES_URL, in a database of
 * their own). Reported: the round with the median ratio to the floor, against which the targets
 * are set. `PAID_SECONDS` sets the seconds of load per round (default 5).
 */
export async function benchPaid(duration = envNumber('PAID_SECONDS', 5)) {
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
    const p = postgres?.[call.name];
    return {
      call: call.name,
      title: call.title,
      body_bytes: Buffer.byteLength(sqlite[call.name].body),
      target: {
        of: 'the durable floor committing on the event loop, on the same database',
        ratio: `>= ${call.target.ratio}`,
        p99_ms: `< ${call.target.p99Ms}`,
      },
      sqlite: onDatabase(sqlite[call.name], call),
      postgres: p ? onDatabase(p, call) : null,
    };
  });
  const result = {
    benchmark:
      'The paid request path (validate live cache hit, validate test key, decide) vs the durable floor and bare node:http',
    command: 'npm run bench -- paid',
    date: today(),
    node: process.version,
    connections: CONNECTIONS,
    rounds: ROUNDS,
    duration_per_round_s: duration,
    note: "Per call and database: the service, a bare server answering the call's bytes and headers, and the durable floor (bench/durable-floor.ts: a bare server answering the same bytes only after committing an audit record of them to the same kind of database; on SQLite committing on the event loop or on a writer thread, on PostgreSQL on the event loop), in alternating rounds. The service's figures are those of the round with the median ratio to the floor that commits on the event loop; the targets are that ratio and the p99, on SQLite and on PostgreSQL. Each floor's figures are those of its round with the median ratio to the bare server.",
    figures,
  };
  writeResult('paid', result);
  const rows = figures.flatMap((f) => [
    ...rowsOf(f, 'sqlite', f.sqlite, result.date, result.command),
    ...(f.postgres ? rowsOf(f, 'postgres', f.postgres, result.date, result.command) : []),
  ]);
  updatePerformanceTable('paid', rows.join('\n'));
  return result;
}
