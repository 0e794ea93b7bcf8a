import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { createManualClock } from '../../src/lib/clock.js';
import { PLAYGROUND_KEY, PLAYGROUND_PRINCIPAL } from '../../src/modules/playground/playground.js';
import { createFakeRegistry } from '../fakes/fake-registry.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { wellFormedNumbers } from '../helpers/batch-numbers.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

const demo = { authorization: `Bearer ${PLAYGROUND_KEY}` };

/** A key's monitor cap, and the demo key's per-address one, hold under concurrent creations. */
for (const target of await databaseTargets()) {
  describe(`monitor caps on ${target.name}`, { skip: target.skip }, () => {
    let db: TestDb;
    let shared: Db;
    let t: TestApp;
    const clock = createManualClock('2026-11-27T10:00:00.000Z');
    const registry = createFakeRegistry();

    beforeEach(async () => {
      db = await target.open();
      shared = { ...db, close: async () => {} };
      t = await buildTestApp(
        { OPENVAT_MONITORS_PRO: '20', OPENVAT_MONITOR_QUIET_WINDOWS: 'none', OPENVAT_STATUS_POLL_MS: '0' },
        { db: shared, clock, registries: registry.ports },
      );
    });
    afterEach(async () => {
      await t.close();
      await db.dispose();
    });

    const count = async (keyId: string) =>
      Number(
        (
          await shared.kysely
            .selectFrom('monitors')
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .where('key_id', '=', keyId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const bulk = (headers: Record<string, string>, numbers: string[], remoteAddress = '127.0.0.1') =>
      t.app.inject({
        method: 'POST',
        url: '/v1/monitors/bulk',
        headers,
        remoteAddress,
        payload: { interval: 'daily', monitors: numbers.map((vat_number) => ({ vat_number })) },
      });
    const create = (headers: Record<string, string>, vat_number: string, remoteAddress = '127.0.0.1') =>
      t.app.inject({
        method: 'POST',
        url: '/v1/monitors',
        headers,
        remoteAddress,
        payload: { vat_number, interval: 'daily' },
      });
    type BulkRow = { ok: boolean; error?: { code: string; message: string } };

    it('five concurrent bulk requests of a full cap each create exactly the cap; the rest are refused rows', async () => {
      const key: TestKey = await t.key('pro', 'test');
      const numbers = wellFormedNumbers('AT', 100);
      const answers = await Promise.all(
        [0, 1, 2, 3, 4].map((i) => bulk(key.headers, numbers.slice(i * 20, i * 20 + 20))),
      );
      let created = 0;
      for (const res of answers) {
        assert.equal(res.statusCode, 200, res.body);
        created += res.json().data.summary.created as number;
        for (const row of res.json().data.results as BulkRow[]) {
          if (row.ok) continue;
          assert.equal(row.error?.code, 'monitor_limit_reached');
          assert.match(row.error?.message ?? '', /at most 20 VAT numbers/);
        }
      }
      assert.equal(created, 20);
      assert.equal(await count(key.id), 20);
    });

    it('concurrent single creations fill the last slots and no more: the others are 403 monitor_limit_reached', async () => {
      const key = await t.key('pro', 'test');
      const numbers = wellFormedNumbers('AT', 45);
      assert.equal((await bulk(key.headers, numbers.slice(0, 15))).json().data.summary.created, 15);
      const answers = await Promise.all(numbers.slice(15).map((n) => create(key.headers, n)));
      const statuses = answers.map((r) => r.statusCode).sort();
      assert.deepEqual(statuses, [...new Array(5).fill(201), ...new Array(25).fill(403)]);
      for (const res of answers.filter((r) => r.statusCode === 403)) {
        assert.equal(res.json().error.code, 'monitor_limit_reached');
        assert.equal(res.json().error.details.max, 20);
      }
      assert.equal(await count(key.id), 20);
    });

    it('the demo key: one address is capped at 100 monitors with a clear error, another can still create', async () => {
      const numbers = wellFormedNumbers('AT', 170);
      // Three concurrent bulk requests from one address: 100 monitors, not 150.
      const answers = await Promise.all(
        [0, 1, 2].map((i) => bulk(demo, numbers.slice(i * 50, i * 50 + 50), '198.51.100.20')),
      );
      const created = answers.reduce((n, res) => n + (res.json().data.summary.created as number), 0);
      assert.equal(created, 100);
      const refusedRow = answers
        .flatMap((res) => res.json().data.results as BulkRow[])
        .find((row) => !row.ok);
      assert.equal(refusedRow?.error?.code, 'monitor_limit_reached');
      assert.match(refusedRow?.error?.message ?? '', /demo key monitors at most 100 VAT numbers per address/);

      const over = await create(demo, numbers[150] as string, '198.51.100.20');
      assert.equal(over.statusCode, 403, over.body);
      assert.equal(over.json().error.code, 'monitor_limit_reached');
      assert.equal(over.json().error.details.max, 100);
      assert.match(over.json().error.message, /per address/);

      const other = await create(demo, numbers[151] as string, '198.51.100.21');
      assert.equal(other.statusCode, 201, other.body);
      assert.equal(await count(PLAYGROUND_PRINCIPAL.id), 101);
      // The addresses are kept as hashes, not as given.
      const visitors = await shared.kysely
        .selectFrom('monitors')
        .select('visitor')
        .distinct()
        .where('key_id', '=', PLAYGROUND_PRINCIPAL.id)
        .execute();
      assert.equal(visitors.length, 2);
      for (const { visitor } of visitors) assert.match(visitor ?? '', /^[0-9a-f]{64}$/);

      // After 24 hours the address's monitors are gone, and it may create again.
      clock.advance(86_400_000);
      const later = await create(demo, numbers[152] as string, '198.51.100.20');
      assert.equal(later.statusCode, 201, later.body);
    });
  });
}
