/** The service as real processes, for end-to-end tests that kill or restart it. */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { builtCli } from './cli.js';

const CLI = builtCli;

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Creates the database at `databaseUrl` (`openvat migrate`) and a live Business key in it; returns the key. */
export function migrateWithLiveKey(databaseUrl: string): string {
  const env = { ...process.env, DATABASE_URL: databaseUrl };
  // Only serve and migrate create a database; the key commands need one.
  execFileSync(process.execPath, [...CLI, 'migrate'], { env });
  return createKeyIn(databaseUrl, 'live');
}

/** A business-plan key of the given mode in an existing database, through the CLI. */
export function createKeyIn(databaseUrl: string, mode: 'live' | 'test'): string {
  const out = execFileSync(
    process.execPath,
    [...CLI, 'keys', 'create', '--plan', 'business', '--mode', mode, '--json'],
    { env: { ...process.env, DATABASE_URL: databaseUrl } },
  );
  return (JSON.parse(out.toString()) as { key: string }).key;
}

/** `openvat serve` on a free port with `env` added; resolves once `/health` answers. */
export async function startServerProcess(
  env: Record<string, string>,
): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [...CLI, 'serve'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      // Tests never ask the Commission's TEDB; a test that syncs names the simulator.
      OPENVAT_TEDB_URL: 'off',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr = (stderr + d).slice(-5_000);
  });
  const url = `http://127.0.0.1:${port}`;
  // A server that never answers is killed, so that it cannot keep the test process alive.
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited: ${stderr}`);
    try {
      if ((await fetch(`${url}/health`)).ok) return { url, child };
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not answer /health within ${START_TIMEOUT_MS / 1000} s: ${stderr}`);
    }
    await sleep(100);
  }
}

/** How long a server process may take to answer `/health` (a loaded machine starts slowly). */
const START_TIMEOUT_MS = 60_000;

/** Counts VIES look-ups per number (`DE123456789`) as they reach the simulator. */
export function countViesCalls(sim: SimulatorServer): Map<string, number> {
  const calls = new Map<string, number>();
  sim.server.on('request', (req) => {
    if (req.method !== 'POST' || !req.url?.includes('check-vat-number')) return;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          countryCode: string;
          vatNumber: string;
        };
        const vat = `${body.countryCode}${body.vatNumber}`;
        calls.set(vat, (calls.get(vat) ?? 0) + 1);
      } catch {
        // not a look-up
      }
    });
  });
  return calls;
}

/**
 * A service that a test can kill and start again: an SQLite file in a temporary folder with a live
 * Business key, the VIES simulator (50 ms per call) with its look-ups counted, and `openvat serve`
 * pointed at both with `env` added.
 */
export interface KillableService {
  databaseUrl: string;
  key: string;
  /** VIES look-ups per number so far. */
  calls: Map<string, number>;
  /** Starts a server process (the previous one must have exited); resolves to its base URL. */
  start(): Promise<string>;
  /** Sends `signal` to the running server process and waits until it has exited. */
  stop(signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  close(): Promise<void>;
}

export async function createKillableService(
  name: string,
  env: Record<string, string>,
): Promise<KillableService> {
  const dir = mkdtempSync(join(tmpdir(), `openvat-${name}-`));
  const databaseUrl = `sqlite:${join(dir, 'openvat.sqlite')}`;
  const sim = createSimulatorServer({ latencyMs: 50 });
  const { urls } = await sim.listen(0, '127.0.0.1');
  const calls = countViesCalls(sim);
  const key = migrateWithLiveKey(databaseUrl);
  let child: ChildProcess | null = null;
  const stop = async (signal: 'SIGKILL' | 'SIGTERM') => {
    const running = child;
    // A process killed by a signal has no exit code, only its signal.
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill(signal);
    await exited;
  };
  return {
    databaseUrl,
    key,
    calls,
    async start() {
      const started = await startServerProcess({
        DATABASE_URL: databaseUrl,
        VIES_URL: urls.VIES_URL,
        VIES_SOAP_URL: urls.VIES_SOAP_URL,
        OPENVAT_STATUS_POLL_MS: '0',
        ...env,
      });
      child = started.child;
      return started.url;
    },
    stop,
    async close() {
      await stop('SIGKILL');
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
