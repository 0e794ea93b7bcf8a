import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { replaceBenchRows } from './table.js';

export const ROOT = resolve(import.meta.dirname, '..');

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

export interface Child {
  url: string;
  process: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

async function waitFor(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`process exited early:\n${output()}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${url}:\n${output()}`);
}

function spawnNode(
  args: string[],
  env: Record<string, string>,
  ipc = false,
): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ipc ? ['pipe', 'pipe', 'pipe', 'ipc'] : 'pipe',
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out = (out + d).slice(-20_000);
  });
  child.stderr?.on('data', (d) => {
    out = (out + d).slice(-20_000);
  });
  return { child, output: () => out };
}

function stopper(child: ChildProcess) {
  return () =>
    new Promise<void>((r) => {
      if (child.exitCode !== null) return r();
      child.once('exit', () => r());
      child.kill('SIGTERM');
    });
}

/**
 * Starts `openvat serve` in its own process on a fresh SQLite database. `nodeArgs` go before the
 * script (e.g. a module to `--import`); `ipc` opens an IPC channel to the process.
 */
export async function startService(
  env: Record<string, string> = {},
  options: { nodeArgs?: string[]; ipc?: boolean } = {},
): Promise<Child & { dataDir: string }> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'openvat-bench-'));
  const { child, output } = spawnNode(
    [...(options.nodeArgs ?? []), 'dist/cli/index.js', 'serve'],
    {
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: `sqlite:${join(dataDir, 'openvat.sqlite')}`,
      LOG_LEVEL: 'warn',
      OPENVAT_PUBLIC_RATE_LIMIT: '100000000',
      OPENVAT_RATE_LIMIT_FREE: '100000000',
      OPENVAT_RATE_LIMIT_STARTER: '100000000',
      OPENVAT_RATE_LIMIT_PRO: '100000000',
      OPENVAT_RATE_LIMIT_BUSINESS: '100000000',
      ...env,
    },
    options.ipc,
  );
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/health`, child, output);
  return { url, process: child, output, stop: stopper(child), dataDir };
}

let probeRequests = 0;

/**
 * Asks a probe preloaded into a service started with `ipc: true` (bench/memory-probe.mjs,
 * bench/profile-probe.mjs): sends `{ type, id, ...fields }` and resolves with the answer of the same
 * type and id, or rejects after `timeoutMs`.
 */
export function askProbe<A>(
  service: Child,
  type: string,
  fields: Record<string, unknown>,
  timeoutMs: number,
): Promise<A> {
  const child = service.process;
  if (!child.send) throw new Error('the service has no IPC channel: start it with ipc: true');
  const id = ++probeRequests;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      reject(new Error(`the ${type} probe did not answer:\n${service.output()}`));
    }, timeoutMs);
    const onMessage = (message: unknown) => {
      const m = message as { type?: string; id?: number };
      if (m?.type !== type || m.id !== id) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(message as A);
    };
    child.on('message', onMessage);
    child.send?.({ type, id, ...fields });
  });
}

/** Runs a TypeScript server script of the bench folder in its own process (through tsx) on a free port. */
export async function startScript(file: string, env: Record<string, string> = {}): Promise<Child> {
  const port = await freePort();
  const { child, output } = spawnNode(['--import', 'tsx', join(ROOT, 'bench', file)], {
    PORT: String(port),
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/health`, child, output);
  return { url, process: child, output, stop: stopper(child) };
}

/** Starts a bare `node:http` server in its own process that answers every request with the given bytes. */
export async function startBare(body: string, headers: Record<string, string>): Promise<Child> {
  const port = await freePort();
  const script = `
    const http = require('node:http');
    const body = Buffer.from(${JSON.stringify(body)});
    const headers = ${JSON.stringify(headers)};
    headers['content-length'] = body.length;
    http.createServer((req, res) => { res.writeHead(200, headers); res.end(body); })
      .listen(${port}, '127.0.0.1');
  `;
  const { child, output } = spawnNode(['-e', script], {});
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/health`, child, output);
  return { url, process: child, output, stop: stopper(child) };
}

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  total: number;
}

export async function load(
  url: string,
  options: {
    connections?: number;
    duration?: number;
    headers?: Record<string, string>;
    /** HTTP method (default GET). */
    method?: 'GET' | 'POST';
    /** Request body sent with every request. */
    body?: string;
    /** A fixed total request rate (requests per second) instead of as fast as possible. */
    rate?: number;
  } = {},
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    connections: options.connections ?? 50,
    duration: options.duration ?? 10,
    headers: options.headers ?? {},
    ...(options.method ? { method: options.method } : {}),
    ...(options.body !== undefined ? { body: options.body } : {}),
    ...(options.rate !== undefined ? { overallRate: options.rate } : {}),
  });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    total: result.requests.total,
  };
}

/** Warms a server up for a few seconds so the JIT has settled before the measured run. */
export async function warm(
  url: string,
  headers: Record<string, string> = {},
  request: { method?: 'GET' | 'POST'; body?: string } = {},
): Promise<void> {
  await autocannon({
    url,
    connections: 10,
    duration: 3,
    headers,
    ...(request.method ? { method: request.method } : {}),
    ...(request.body !== undefined ? { body: request.body } : {}),
  });
}

/** A number of the environment, or the default. */
export function envNumber(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, not "${value}"`);
  return n;
}

export function today(): string {
  return new Date().toISOString().slice(0, 10);
}

/** Writes a result file to bench/results/ and returns its path. */
export function writeResult(name: string, result: unknown): string {
  const dir = join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.json`);
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
  return path;
}

/** Replaces the benchmark's rows in the results table of docs/performance.md (see `bench/table.ts`). */
export function updatePerformanceTable(name: string, markdown: string): void {
  const path = join(ROOT, 'docs', 'performance.md');
  writeFileSync(path, replaceBenchRows(readFileSync(path, 'utf8'), name, markdown));
}

export function createKey(dataDir: string, plan: string, mode: string): string {
  const out = execFileSync(
    process.execPath,
    ['dist/cli/index.js', 'keys', 'create', '--plan', plan, '--mode', mode, '--json'],
    { cwd: ROOT, env: { ...process.env, DATABASE_URL: `sqlite:${join(dataDir, 'openvat.sqlite')}` } },
  );
  return (JSON.parse(out.toString()) as { key: string }).key;
}

/** The bare `node:http` baseline: the same bytes and headers, measured like the service. */
export async function loadBare(
  body: string,
  headers: Record<string, string>,
  duration: number,
): Promise<LoadResult> {
  const bare = await startBare(body, headers);
  try {
    await warm(bare.url);
    return await load(bare.url, { connections: 50, duration });
  } finally {
    await bare.stop();
  }
}

export function ratioOf(service: LoadResult, bare: LoadResult): number {
  return Math.round((service.requestsPerSecond / bare.requestsPerSecond) * 100) / 100;
}

/**
 * `openvat simulate` in its own process, so the simulated registries do not share an event loop
 * with the load generator or the latency sampler.
 */
export async function startSimulatorProcess(latencyMs: number) {
  const port = await freePort();
  const { child, output } = spawnNode(
    ['dist/cli/index.js', 'simulate', '--port', String(port), '--latency', String(latencyMs)],
    {},
  );
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`simulator exited:\n${output()}`);
    try {
      if ((await fetch(`${base}/_stats`)).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`simulator did not start:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    urls: {
      VIES_URL: `${base}/vies/rest-api`,
      VIES_SOAP_URL: `${base}/vies/services/checkVatService`,
    },
    async control(command: Record<string, unknown>) {
      const res = await fetch(`${base}/_control`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(command),
      });
      if (!res.ok) throw new Error(`simulator control: ${res.status} ${await res.text()}`);
    },
    async stats(): Promise<Record<string, unknown>> {
      return (await (await fetch(`${base}/_stats`)).json()) as Record<string, unknown>;
    },
    stop: stopper(child),
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
