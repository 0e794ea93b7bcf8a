import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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
import { countViesCalls, migrateWithLiveKey, startServerProcess } from '../helpers/processes.js';

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
    calls = countViesCalls(sim);
    key = migrateWithLiveKey(databaseUrl);
  });
  after(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(): Promise<string> {
    const started = await startServerProcess({
      DATABASE_URL: databaseUrl,
      VIES_URL: urls.VIES_URL,
      VIES_SOAP_URL: urls.VIES_SOAP_URL,
      OPENVAT_STATUS_POLL_MS: '0',
      OPENVAT_MONITOR_LEASE_MS: '1000',
      OPENVAT_MONITOR_PER_COUNTRY: '2',
      // The real clock runs here: no quiet window may defer the first checks.
      OPENVAT_MONITOR_QUIET_WINDOWS: 'none',
    });
    child = started.child;
    return started.url;
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
