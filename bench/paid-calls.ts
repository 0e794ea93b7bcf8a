/**
 * The paid-path calls that the paid benchmarks share (`paid`, `paid-memory`, `paid-scale`), and what
 * they need around them: keys, a scratch PostgreSQL database, CPU figures from /proc.
 */

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { ROOT } from './lib.js';

/** Connections of the paid-path load. */
export const CONNECTIONS = 50;
/** A number the VIES simulator answers valid (asked once, then served from the cache). */
export const LIVE_NUMBER = 'FR40303265045';
export const DECIDE_BODY = JSON.stringify({
  seller_vat: 'DE136308783',
  buyer_vat: 'FR40303265045',
  supply_type: 'services',
});

export interface Call {
  name: 'validate-live' | 'validate-test' | 'decide';
  title: string;
  /**
   * Throughput target as a share of the durable floor's that commits on the event loop (bench/durable-floor.ts),
   * on the same database (SQLite, and PostgreSQL against its PostgreSQL floor); p99 target in ms.
   */
  target: { ratio: number; p99Ms: number };
  path: string;
  key: 'live' | 'test';
  method?: 'POST';
  body?: string;
}

export const CALLS: Call[] = [
  {
    name: 'validate-live',
    title: '`GET /v1/validate` cache hit, live key (audit record + event per call)',
    target: { ratio: 0.75, p99Ms: 10 },
    path: `/v1/validate?vat_number=${LIVE_NUMBER}`,
    key: 'live',
  },
  {
    name: 'validate-test',
    title: '`GET /v1/validate`, test key (audit record per call)',
    target: { ratio: 0.75, p99Ms: 10 },
    path: `/v1/validate?vat_number=${LIVE_NUMBER}`,
    key: 'test',
  },
  {
    name: 'decide',
    title: '`POST /v1/decide`, B2B, test key (audit record per call)',
    target: { ratio: 0.75, p99Ms: 10 },
    path: '/v1/decide',
    key: 'test',
    method: 'POST',
    body: DECIDE_BODY,
  },
];

/** Headers of an answer that the bare server sends as they are (the rest are per connection). */
export function replayableHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of headers) {
    if (['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'].includes(name)) continue;
    out[name] = value;
  }
  return out;
}

export function createKeyOn(databaseUrl: string, mode: 'live' | 'test'): string {
  const out = execFileSync(
    process.execPath,
    ['dist/cli/index.js', 'keys', 'create', '--plan', 'business', '--mode', mode, '--json'],
    { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl } },
  );
  return (JSON.parse(out.toString()) as { key: string }).key;
}

/** A fresh PostgreSQL database of its own (named after `label`) next to the one `url` names; dropped by the returned function. */
export async function scratchPostgres(
  url: string,
  label = 'paid',
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `openvat_bench_${label}_${process.pid}`;
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

/** CPU time (ms) of a process's main thread so far, from /proc (Linux); null elsewhere. */
export function mainThreadCpuMs(pid: number | undefined): number | null {
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
export const CLOCK_TICKS = 100;

/** Cores a process used since `startedAt` (ms, `performance.now()`), given its CPU usage meanwhile. */
export const cores = (usage: NodeJS.CpuUsage, startedAt: number) =>
  Math.round(((usage.user + usage.system) / 1000 / (performance.now() - startedAt)) * 100) / 100;

/** The machine's idle and total CPU ticks so far (all cores, from /proc/stat); null elsewhere. */
export function machineTicks(): { idle: number; total: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] as string;
    const values = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: idle and iowait are idle time.
    return {
      idle: (values[3] ?? 0) + (values[4] ?? 0),
      total: values.slice(0, 8).reduce((a, b) => a + b, 0),
    };
  } catch {
    return null;
  }
}

/** A call's headers and, for a POST, its method and body, as `load` and `warm` take them. */
export function callRequest(
  call: Call,
  keys: Record<'live' | 'test', string>,
): { headers: Record<string, string>; request: { method?: 'POST'; body?: string } } {
  const headers: Record<string, string> = { authorization: `Bearer ${keys[call.key]}` };
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  const request = call.method ? { method: call.method, body: call.body as string } : {};
  return { headers, request };
}

/**
 * Asks a call of the service at `base` until the live key's answer comes from the cache (the first
 * asks the simulator and stores the answer; the load is cache hits) and returns a sample answer.
 */
export async function primeCall(
  base: string,
  call: Call,
  keys: Record<'live' | 'test', string>,
): Promise<{ body: string; headers: Headers }> {
  const url = `${base}${call.path}`;
  const { headers, request } = callRequest(call, keys);
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
  return { body, headers: sample.headers };
}

/** The item with the median of the given key. */
export function medianBy<T>(items: T[], key: (item: T) => number): T {
  return [...items].sort((a, b) => key(a) - key(b))[Math.floor(items.length / 2)] as T;
}
