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
import { expectedViesAnswer } from '../../src/simulators/vies.js';
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

describe('a batch job survives kill -9 of the server mid-way', () => {
  let dir: string;
  let databaseUrl: string;
  let sim: SimulatorServer;
  let urls: SimulatorUrls;
  let calls: Map<string, number>;
  let key: string;
  let child: ChildProcess | null = null;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-batch-recovery-'));
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
        OPENVAT_BATCH_LEASE_MS: '1000',
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

  async function job(url: string, id: string) {
    const res = await fetch(`${url}/v1/validate/batch/${id}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(res.status, 200);
    return (
      (await res.json()) as {
        data: {
          status: string;
          done: number;
          results?: Array<{ ok: boolean; data?: { vat_number: string; valid: boolean } }>;
        };
      }
    ).data;
  }

  it('no finished item is validated again and no result is lost', async () => {
    const numbers = wellFormedNumbers('DE', 300, 1_000);
    // A requester makes every look-up live (never from the cache), so any repeat would reach the registry.
    const requester = wellFormedNumbers('DE', 50, 9_000).find((vat) => {
      const expected = expectedViesAnswer('DE', vat.slice(2));
      return 'valid' in expected && expected.valid;
    });
    let url = await start();
    const created = await fetch(`${url}/v1/validate/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ vat_numbers: numbers, requester_vat_number: requester, async: true }),
    });
    assert.equal(created.status, 202);
    const { id } = ((await created.json()) as { data: { id: string } }).data;

    while ((await job(url, id)).done < 100) await sleep(50);
    child?.kill('SIGKILL');
    await new Promise((resolve) => child?.once('exit', resolve));

    const db = createDatabase(databaseUrl);
    const finished = await db.kysely
      .selectFrom('batch_items')
      .select('vat_number')
      .where('job_id', '=', id)
      .where('status', '=', 'done')
      .execute();
    await db.close();
    assert.ok(finished.length >= 100 && finished.length < 300, `${finished.length} finished before the kill`);
    const atKill = new Map(finished.map((r) => [r.vat_number, calls.get(r.vat_number) ?? 0]));

    url = await start();
    let data = await job(url, id);
    while (data.status !== 'completed') {
      await sleep(100);
      data = await job(url, id);
    }
    child?.kill('SIGTERM');

    for (const [vat, count] of atKill) {
      assert.equal(count, 1, `${vat} was asked once before the kill`);
      assert.equal(calls.get(vat), 1, `${vat} finished before the kill and was validated again`);
    }
    const results = data.results ?? [];
    assert.equal(results.length, 300);
    results.forEach((item, i) => {
      const vat = numbers[i] as string;
      assert.equal(item.ok, true, vat);
      assert.equal(item.data?.vat_number, vat);
      const expected = expectedViesAnswer('DE', vat.slice(2));
      assert.ok('valid' in expected);
      assert.equal(item.data?.valid, expected.valid);
      assert.ok((calls.get(vat) ?? 0) >= 1);
    });
  });
});
