import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase } from '../../src/db/database.js';
import {
  createSimulatorServer,
  type SimulatorServer,
  type SimulatorUrls,
} from '../../src/simulators/server.js';
import { wellFormedNumbers } from '../helpers/batch-numbers.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Counts VIES look-ups per number (`DE123456789`) as they reach the simulator. */
function countCalls(sim: SimulatorServer): Map<string, number> {
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

describe('scheduled monitor checks survive kill -9 of the server mid-way', () => {
  let dir: string;
  let databaseUrl: string;
  let sim: SimulatorServer;
  let urls: SimulatorUrls;
  let calls: Map<string, number>;
  let key: string;
  let child: ChildProcess | null = null;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-monitors-recovery-'));
    databaseUrl = `sqlite:${join(dir, 'openvat.sqlite')}`;
    sim = createSimulatorServer({ latencyMs: 50 });
    ({ urls } = await sim.listen(0, '127.0.0.1'));
    calls = countCalls(sim);
    // Only serve and migrate create a database; the key commands need one.
    execFileSync(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'migrate'], {
      env: { ...process.env, DATABASE_URL: databaseUrl },
    });
    const out = execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli/index.ts',
        'keys',
        'create',
        '--plan',
        'business',
        '--mode',
        'live',
        '--json',
      ],
      { env: { ...process.env, DATABASE_URL: databaseUrl } },
    );
    key = (JSON.parse(out.toString()) as { key: string }).key;
  });
  after(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(): Promise<string> {
    const port = await freePort();
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'serve'], {
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: String(port),
        DATABASE_URL: databaseUrl,
        LOG_LEVEL: 'warn',
        VIES_URL: urls.VIES_URL,
        VIES_SOAP_URL: urls.VIES_SOAP_URL,
        OPENVAT_STATUS_POLL_MS: '0',
        OPENVAT_MONITOR_LEASE_MS: '1000',
        OPENVAT_MONITOR_PER_COUNTRY: '2',
        // The real clock runs here: no quiet window may defer the first checks.
        OPENVAT_MONITOR_QUIET_WINDOWS: 'none',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    proc.stderr?.on('data', (d) => {
      stderr = (stderr + d).slice(-5_000);
    });
    child = proc;
    const url = `http://127.0.0.1:${port}`;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`server exited: ${stderr}`);
      try {
        if ((await fetch(`${url}/health`)).ok) return url;
      } catch {
        // not up yet
      }
      await sleep(100);
    }
  }

  async function unchecked(url: string): Promise<number> {
    const res = await fetch(`${url}/v1/monitors/summary`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200);
    return ((await res.json()) as { data: { unknown: number } }).data.unknown;
  }

  it('no finished check is made again and every monitor gets its check', async () => {
    const numbers = [...wellFormedNumbers('DE', 100, 3_000), ...wellFormedNumbers('AT', 100, 3_000)];
    let url = await start();
    const created = await fetch(`${url}/v1/monitors/bulk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ interval: 'daily', monitors: numbers.map((vat_number) => ({ vat_number })) }),
    });
    assert.equal(created.status, 200);
    while ((await unchecked(url)) > 150) await sleep(50);
    child?.kill('SIGKILL');
    await new Promise((resolve) => child?.once('exit', resolve));

    const db = createDatabase(databaseUrl);
    const checked = await db.kysely
      .selectFrom('monitors')
      .select('vat_number')
      .where('checks', '>', 0)
      .execute();
    await db.close();
    assert.ok(checked.length >= 50 && checked.length < 200, `${checked.length} checked before the kill`);

    url = await start();
    while ((await unchecked(url)) > 0) await sleep(100);
    child?.kill('SIGTERM');
    await new Promise((resolve) => child?.once('exit', resolve));

    for (const { vat_number } of checked) {
      assert.equal(calls.get(vat_number), 1, `${vat_number} was checked before the kill and asked again`);
    }
    const after = createDatabase(databaseUrl);
    const rows = await after.kysely
      .selectFrom('monitors')
      .select(['vat_number', 'checks', 'status'])
      .execute();
    const checks = await after.kysely.selectFrom('monitor_checks').select('monitor_id').execute();
    await after.close();
    assert.equal(rows.length, 200);
    assert.ok(rows.every((r) => r.checks === 1 && r.status !== 'unknown'));
    assert.equal(checks.length, 200, 'one check per monitor');
    for (const vat of numbers) assert.ok((calls.get(vat) ?? 0) >= 1, vat);
  });
});
