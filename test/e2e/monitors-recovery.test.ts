import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase } from '../../src/db/database.js';
import { wellFormedNumbers } from '../helpers/batch-numbers.js';
import { createKillableService, type KillableService } from '../helpers/processes.js';

describe('scheduled monitor checks survive kill -9 of the server mid-way', () => {
  let service: KillableService;
  let key: string;
  let databaseUrl: string;
  let calls: Map<string, number>;

  before(async () => {
    service = await createKillableService('monitors-recovery', {
      OPENVAT_MONITOR_LEASE_MS: '1000',
      OPENVAT_MONITOR_PER_COUNTRY: '2',
      // The real clock runs here: no quiet window may defer the first checks.
      OPENVAT_MONITOR_QUIET_WINDOWS: 'none',
    });
    ({ key, databaseUrl, calls } = service);
  });
  after(() => service.close());

  const start = () => service.start();

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
    await service.stop('SIGKILL');

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
    await service.stop('SIGTERM');

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
