import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import {
  type Child,
  type LoadResult,
  load,
  ROOT,
  startBare,
  startService,
  startSimulatorProcess,
  today,
  updatePerformanceTable,
  warm,
  writeResult,
} from './lib.js';

const CONNECTIONS = 50;
/** A number the VIES simulator answers valid (asked once, then served from the cache). */
const LIVE_NUMBER = 'FR40303265045';
const DECIDE_BODY = JSON.stringify({
  seller_vat: 'DE136308783',
  buyer_vat: 'FR40303265045',
  supply_type: 'services',
});

interface Call {
  name: 'validate-live' | 'validate-test' | 'decide';
  title: string;
  /** Throughput target as a share of the bare server's; p99 target in ms (SQLite). */
  target: { ratio: number; p99Ms: number };
  path: string;
  key: 'live' | 'test';
  method?: 'POST';
  body?: string;
}

const CALLS: Call[] = [
  {
    name: 'validate-live',
    title: '`GET /v1/validate` cache hit, live key (audit record + event per call)',
    target: { ratio: 0.5, p99Ms: 10 },
    path: `/v1/validate?vat_number=${LIVE_NUMBER}`,
    key: 'live',
  },
  {
    name: 'validate-test',
    title: '`GET /v1/validate`, test key (audit record per call)',
    target: { ratio: 0.6, p99Ms: 10 },
    path: `/v1/validate?vat_number=${LIVE_NUMBER}`,
    key: 'test',
  },
  {
    name: 'decide',
    title: '`POST /v1/decide`, B2B, test key (audit record per call)',
    target: { ratio: 0.5, p99Ms: 10 },
    path: '/v1/decide',
    key: 'test',
    method: 'POST',
    body: DECIDE_BODY,
  },
];

/** Headers of an answer that the bare server sends as they are (the rest are per connection). */
function replayableHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of headers) {
    if (['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(name)) continue;
    out[name] = value;
  }
  return out;
}

function createKeyOn(databaseUrl: string, mode: 'live' | 'test'): string {
  const out = execFileSync(
    process.execPath,
    ['dist/cli/index.js', 'keys', 'create', '--plan', 'business', '--mode', mode, '--json'],
    { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl } },
  );
  return (JSON.parse(out.toString()) as { key: string }).key;
}

/** A fresh PostgreSQL database of its own next to the one `url` names; dropped by the returned function. */
async function scratchPostgres(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `openvat_bench_paid_${process.pid}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const own = new URL(url);
  own.pathname = `/${name}`;
  return {
    url: own.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Rounds of each call, alternating between the service and its bare server. */
const ROUNDS = 3;

interface Round {
  service: LoadResult & {
    /** CPU time of the service's main thread (the event loop) per request, and its share of the round. */
    main_thread_us_per_request: number | null;
    main_thread_busy: number | null;
  };
  bare: LoadResult;
  ratio: number;
}

/** CPU time (ms) of a process's main thread so far, from /proc (Linux); null elsewhere. */
function mainThreadCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}
/** USER_HZ, 100 on Linux. */
const CLOCK_TICKS = 100;

interface Measured {
  /** The median round by ratio (its figures are reported), and every round. */
  median: Round;
  rounds: Round[];
  body: string;
}

/** ", main thread 94% busy, 60 µs per request" when measured. */
const mainThread = (s: Round['service']) =>
  s.main_thread_busy === null
    ? ''
    : `; main thread ${Math.round(s.main_thread_busy * 100)}% busy, ${s.main_thread_us_per_request} µs CPU per request`;

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
): Promise<Measured> {
  const url = `${service.url}${call.path}`;
  const headers: Record<string, string> = { authorization: `Bearer ${keys[call.key]}` };
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  const request = call.method ? { method: call.method, body: call.body as string } : {};
  // The first call of the live key asks the simulator and stores the answer; the load is cache hits.
  for (let i = 0; i < 2; i++) {
    const res = await fetch(url, { ...request, headers });
    if (!res.ok) throw new Error(`${call.name}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  }
  const sample = await fetch(url, { ...request, headers });
  const body = await sample.text();
  if (!sample.ok) throw new Error(`${call.name}: ${sample.status} ${body}`);
  if (call.key === 'live' && !(JSON.parse(body) as { meta: { cached: boolean } }).meta.cached) {
    throw new Error(`${call.name}: the measured call is not a cache hit: ${body}`);
  }
  const bare = await startBare(body, replayableHeaders(sample.headers));
  try {
    await warm(url, headers, request);
    await warm(bare.url);
    const rounds: Round[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const cpuBefore = mainThreadCpuMs(service.process.pid);
      const startedAt = performance.now();
      const s = await load(url, { connections: CONNECTIONS, duration, headers, ...request });
      const elapsedMs = performance.now() - startedAt;
      const cpuAfter = mainThreadCpuMs(service.process.pid);
      if (s.non2xx || s.errors) throw new Error(`${call.name}: ${JSON.stringify(s)}`);
      const cpuMs = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
      const b = await load(bare.url, { connections: CONNECTIONS, duration });
      rounds.push({
        service: {
          ...s,
          main_thread_us_per_request: cpuMs === null ? null : Math.round((cpuMs * 1000) / s.total),
          main_thread_busy: cpuMs === null ? null : Math.round((cpuMs / elapsedMs) * 100) / 100,
        },
        bare: b,
        ratio: ratio(s, b),
      });
    }
    const byRatio = [...rounds].sort((a, b) => a.ratio - b.ratio);
    return { median: byRatio[Math.floor(byRatio.length / 2)] as Round, rounds, body };
  } finally {
    await bare.stop();
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
    for (const call of CALLS) out[call.name] = await measureCall(service, keys, call, duration);
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
    note: "Per call and database: the service and a bare server answering the call's bytes and headers, in alternating rounds; the figures are those of the round with the median ratio. Targets apply to SQLite.",
    figures,
  };
  writeResult('paid', result);
  const rows = figures.flatMap((f) => {
    const row = [
      `| ${f.title}, SQLite (${result.date}, \`${result.command}\`, median of ${ROUNDS} alternating rounds: ${f.sqlite_rounds.join(', ')}) | ${f.sqlite.requestsPerSecond.toLocaleString('en')} req/s, p99 ${f.sqlite.p99} ms${mainThread(f.sqlite)} | bare \`node:http\`: ${f.bare.requestsPerSecond.toLocaleString('en')} req/s, p99 ${f.bare.p99} ms | **${f.sqlite.ratio}×** (target ${f.target.ratio.replace('>= ', '≥ ')}, p99 ${f.target.p99_ms} ms: ${f.met ? 'met' : 'not met'}) |`,
    ];
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
