import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { createManualClock } from '../../src/lib/clock.js';
import { PLAYGROUND_KEY } from '../../src/modules/playground/playground.js';
import { createFakeRegistry } from '../fakes/fake-registry.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { wellFormedNumbers } from '../helpers/batch-numbers.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

const DAY = 86_400_000;
const demo = { authorization: `Bearer ${PLAYGROUND_KEY}` };

for (const target of await databaseTargets()) {
  describe(`monitors of the demo key and of revoked keys on ${target.name}`, { skip: target.skip }, () => {
    let db: TestDb;
    let shared: Db;
    const apps: TestApp[] = [];
    const clock = createManualClock('2026-11-23T10:00:00.000Z');
    const registry = createFakeRegistry();

    async function instance(env: Record<string, string> = {}): Promise<TestApp> {
      const t = await buildTestApp(
        {
          OPENVAT_STATUS_POLL_MS: '0',
          OPENVAT_REGISTRY_BACKOFF_MS: '1',
          OPENVAT_MONITOR_QUIET_WINDOWS: 'none',
          OPENVAT_MONITOR_PER_COUNTRY: '8',
          ...env,
        },
        { db: shared, clock, registries: registry.ports },
      );
      apps.push(t);
      return t;
    }

    beforeEach(async () => {
      db = await target.open();
      shared = { ...db, close: async () => {} };
      clock.set('2026-11-23T10:00:00.000Z');
    });
    afterEach(async () => {
      for (const t of apps.splice(0)) await t.close();
      await db.dispose();
    });

    let address = 0;
    /** A request as a visitor of /docs makes it (each from its own address: the demo key's hourly budget). */
    const call = (
      t: TestApp,
      headers: Record<string, string>,
      method: 'GET' | 'POST',
      url: string,
      payload?: object,
    ) =>
      t.app.inject({
        method,
        url,
        headers,
        remoteAddress: `198.51.100.${(address++ % 200) + 1}`,
        ...(payload ? { payload } : {}),
      });
    const monitorIds = async (keyId: string) =>
      (await shared.kysely.selectFrom('monitors').select('id').where('key_id', '=', keyId).execute()).map(
        (r) => r.id,
      );

    it("the demo key's monitors are listed 24 hours after creation, then gone for every visitor and purged", async () => {
      const t = await instance();
      const own = await t.key('business', 'test');
      const created = await call(t, demo, 'POST', '/v1/monitors', {
        vat_number: 'DE100000008',
        interval: 'daily',
      });
      assert.equal(created.statusCode, 201, created.body);
      const id = created.json().data.monitor.id as string;
      const bulk = await call(t, demo, 'POST', '/v1/monitors/bulk', {
        interval: 'weekly',
        monitors: [{ vat_number: 'ATU00000024' }],
      });
      assert.equal(bulk.json().data.summary.created, 1, bulk.body);
      const ownId = (
        await call(t, own.headers, 'POST', '/v1/monitors', { vat_number: 'DE100000008', interval: 'daily' })
      ).json().data.monitor.id as string;

      // Every later visitor of /docs holds the same key, and sees them for 24 hours.
      clock.advance(DAY - 1);
      assert.equal((await call(t, demo, 'GET', '/v1/monitors')).json().data.length, 2);
      assert.equal((await call(t, demo, 'GET', `/v1/monitors/${id}`)).statusCode, 200);
      assert.equal((await call(t, demo, 'GET', '/v1/monitors/summary')).json().data.total, 2);
      assert.equal(await t.container.monitors.purgePlayground(), 0);

      clock.advance(1);
      assert.deepEqual(
        (await call(t, demo, 'GET', '/v1/monitors')).json().data,
        [],
        'not listed, before any purge',
      );
      assert.equal((await call(t, demo, 'GET', `/v1/monitors/${id}`)).statusCode, 404);
      assert.equal((await call(t, demo, 'POST', `/v1/monitors/${id}/check`)).statusCode, 404);
      assert.equal((await call(t, demo, 'GET', '/v1/monitors/summary')).json().data.total, 0);
      assert.deepEqual((await call(t, demo, 'GET', '/v1/monitors/changes')).json().data, []);
      // Its scheduled checks stop too: the bulk-created one, due since its creation, is not checked now.
      const bulkId = bulk.json().data.results[0].id as string;
      await t.container.monitorScheduler.drain();
      const bulkChecks = await shared.kysely
        .selectFrom('monitor_checks')
        .select('id')
        .where('monitor_id', '=', bulkId)
        .execute();
      assert.deepEqual(bulkChecks, []);

      // The same number can be monitored again: a new monitor, not the expired one.
      const again = await call(t, demo, 'POST', '/v1/monitors', {
        vat_number: 'DE100000008',
        interval: 'daily',
      });
      assert.equal(again.statusCode, 201, again.body);
      const newId = again.json().data.monitor.id as string;
      assert.notEqual(newId, id);
      assert.deepEqual(
        (await call(t, demo, 'GET', '/v1/monitors')).json().data.map((m: { id: string }) => m.id),
        [newId],
      );

      assert.equal(await t.container.monitors.purgePlayground(1), 1, 'the bulk-created one, with its checks');
      const demoRows = await shared.kysely
        .selectFrom('monitors')
        .select('id')
        .where('id', '!=', ownId)
        .execute();
      assert.deepEqual(
        demoRows.map((r) => r.id),
        [newId],
      );
      const orphans = await shared.kysely
        .selectFrom('monitor_checks')
        .select('id')
        .where('monitor_id', 'in', [id, bulkId])
        .execute();
      assert.deepEqual(orphans, []);
      assert.equal((await call(t, own.headers, 'GET', `/v1/monitors/${ownId}`)).statusCode, 200);
    });

    const create = (t: TestApp, key: TestKey, vat: string) =>
      call(t, key.headers, 'POST', '/v1/monitors', { vat_number: vat, interval: 'daily' });

    it('a key revoked on this instance stops its scheduled checks at once, though it was checked before', async () => {
      const t = await instance();
      const key = await t.key('business', 'live');
      const [vat] = wellFormedNumbers('AT', 1, 80_000) as [string];
      assert.equal((await create(t, key, vat)).statusCode, 201);
      clock.advance(1.6 * DAY);
      assert.equal(
        await t.container.monitorScheduler.drain(),
        1,
        'a scheduled check while the key is active',
      );
      assert.equal((await t.container.keys.revokeKey(key.id)).kind, 'ok');
      const before = registry.calls.length;
      clock.advance(1.6 * DAY);
      await t.container.monitorScheduler.drain();
      assert.deepEqual(registry.calls.slice(before), [], 'no registry call after the revocation');
      const [row] = await shared.kysely
        .selectFrom('monitors')
        .selectAll()
        .where('key_id', '=', key.id)
        .execute();
      assert.equal(row?.next_check_at, '9999-12-31T00:00:00.000Z');
    });

    it('a key revoked elsewhere (the CLI) stops its scheduled checks here once OPENVAT_KEY_CACHE_MS has passed', async () => {
      const t = await instance({ OPENVAT_KEY_CACHE_MS: '5000' });
      const cli = await instance();
      const key = await t.key('business', 'live');
      const kept = await t.key('business', 'live');
      const [a, b] = wellFormedNumbers('AT', 2, 90_000) as [string, string];
      await create(t, key, a);
      await create(t, kept, b);
      clock.advance(1.6 * DAY);
      assert.equal(await t.container.monitorScheduler.drain(), 2);
      assert.equal((await cli.container.keys.revokeKey(key.id)).kind, 'ok');
      const before = registry.calls.length;
      clock.advance(1.6 * DAY);
      assert.equal(await t.container.monitorScheduler.drain(), 2);
      assert.deepEqual(registry.calls.slice(before), [b], "only the active key's number is asked");
      assert.equal((await monitorIds(key.id)).length, 1, 'the monitor itself stays');
    });
  });
}
