import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { createManualClock } from '../../src/lib/clock.js';
import { createFakeRegistry } from '../fakes/fake-registry.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { wellFormedNumbers } from '../helpers/batch-numbers.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

// Work stored on a key's behalf (batch jobs, monitors) stops when the key may no longer be used:
// revoked, expired, rolled past its overlap, or its account disabled through the admin API, including
// work that was with a registry at that moment.
for (const target of await databaseTargets()) {
  describe(`batch jobs and monitors of keys that may no longer be used (${target.name})`, {
    skip: target.skip,
  }, () => {
    let db: TestDb;
    let shared: Db;
    let t: TestApp;
    let admin: { authorization: string };
    const clock = createManualClock('2026-11-27T10:00:00.000Z');
    const registry = createFakeRegistry();

    beforeEach(async () => {
      db = await target.open();
      shared = { ...db, close: async () => {} };
      clock.set('2026-11-27T10:00:00.000Z');
      t = await buildTestApp(
        {
          OPENVAT_STATUS_POLL_MS: '0',
          OPENVAT_REGISTRY_BACKOFF_MS: '1',
          OPENVAT_BATCH_CONCURRENCY: '2',
          OPENVAT_MONITOR_QUIET_WINDOWS: 'none',
          OPENVAT_MONITOR_PER_COUNTRY: '8',
        },
        { db: shared, clock, registries: registry.ports, redis: null },
      );
      admin = { authorization: `Bearer ${(await t.container.admin.createKey('ops', 'admin')).key}` };
    });
    afterEach(async () => {
      registry.releaseAll();
      await t.close();
      await db.dispose();
    });

    const adminCall = async (method: 'POST' | 'PATCH', url: string, payload: object = {}) => {
      const response = await t.app.inject({ method, url, headers: admin, payload });
      assert.ok(response.statusCode < 300, response.body);
      return response;
    };
    const submit = async (key: TestKey, numbers: string[]) => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/v1/validate/batch',
        headers: key.headers,
        payload: { vat_numbers: numbers, async: true },
      });
      assert.equal(response.statusCode, 202, response.body);
      return response.json().data.id as string;
    };
    const job = (id: string) =>
      shared.kysely
        .selectFrom('batch_jobs')
        .select(['status', 'cancel_reason'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    const events = () => shared.kysely.selectFrom('events').select('type').execute();
    const until = async (condition: () => boolean) => {
      for (let i = 0; i < 2_000 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
      assert.ok(condition());
    };

    it('a job whose items were all with the registry when its key was revoked ends cancelled: no event, no audit record', async () => {
      const key = await t.key('business', 'live');
      const numbers = wellFormedNumbers('AT', 2, 900);
      const id = await submit(key, numbers);
      registry.hold();
      const running = t.container.batchWorker.runOnce();
      await until(() => registry.heldCount() === 2);
      await adminCall('POST', `/admin/v1/keys/${key.id}/revoke`);
      registry.releaseAll();
      await running;
      await t.container.batchWorker.drain();
      assert.deepEqual(await job(id), { status: 'cancelled', cancel_reason: 'key_revoked' });
      assert.deepEqual(await events(), [], 'no batch.completed event');
      const audits = await shared.kysely.selectFrom('audits').select('endpoint').execute();
      assert.deepEqual(
        audits.filter((a) => a.endpoint === 'validate_batch'),
        [],
        'the job never completes',
      );
    });

    it('a job stops, saying why, when its key expires, is rolled past its overlap or its account is disabled', async () => {
      const expiring = await t.key('business', 'live');
      const rolled = await t.key('business', 'live');
      const disabled = await t.key('business', 'live');
      const kept = await t.key('business', 'live');
      await adminCall('PATCH', `/admin/v1/keys/${expiring.id}`, { expires_at: '2026-11-27T10:01:00.000Z' });
      const jobs = {
        expiring: await submit(expiring, wellFormedNumbers('AT', 2, 910)),
        rolled: await submit(rolled, wellFormedNumbers('AT', 2, 920)),
        disabled: await submit(disabled, wellFormedNumbers('AT', 2, 930)),
        kept: await submit(kept, wellFormedNumbers('AT', 2, 940)),
      };
      await adminCall('POST', `/admin/v1/keys/${rolled.id}/roll`, { overlap_seconds: 30 });
      await adminCall('PATCH', `/admin/v1/accounts/${disabled.accountId}`, { disabled: true });
      clock.advance(61_000);
      const before = registry.calls.length;
      await t.container.batchWorker.drain();
      assert.deepEqual(
        registry.calls.slice(before).sort(),
        wellFormedNumbers('AT', 2, 940).sort(),
        'only the usable key asks the registry',
      );
      assert.deepEqual(await job(jobs.expiring), { status: 'cancelled', cancel_reason: 'key_expired' });
      assert.deepEqual(await job(jobs.rolled), { status: 'cancelled', cancel_reason: 'key_rolled' });
      assert.deepEqual(await job(jobs.disabled), { status: 'cancelled', cancel_reason: 'account_disabled' });
      assert.deepEqual(await job(jobs.kept), { status: 'completed', cancel_reason: null });
      assert.deepEqual(await events(), [{ type: 'batch.completed' }]);
      const view = await t.container.batch.getJob(
        {
          id: rolled.id,
          accountId: rolled.accountId,
          plan: 'business',
          mode: 'live',
          defaultRequesterVat: null,
        },
        jobs.rolled,
      );
      assert.ok(view.kind === 'progress');
      assert.equal(view.view.cancel_reason?.code, 'key_rolled');
      assert.match(view.view.cancel_reason?.message ?? '', /rolled/);
    });

    it('a monitor check under way when its key is revoked is not written and emits nothing; a disabled account pauses checks until enabled', async () => {
      const revoked = await t.key('business', 'live');
      const paused = await t.key('business', 'live');
      const [a, b] = wellFormedNumbers('AT', 2, 950) as [string, string];
      registry.set(a, { valid: true, name: 'Alpha GmbH', address: 'Wien' });
      registry.set(b, { valid: true, name: 'Beta GmbH', address: 'Graz' });
      for (const [key, vat] of [
        [revoked, a],
        [paused, b],
      ] as const) {
        const created = await t.app.inject({
          method: 'POST',
          url: '/v1/monitors',
          headers: key.headers,
          payload: { vat_number: vat, interval: 'daily' },
        });
        assert.equal(created.statusCode, 201, created.body);
      }
      const checks = async () =>
        (await shared.kysely.selectFrom('monitor_checks').select('id').execute()).length;
      const checksBefore = await checks();
      // Both companies change their names: a check that were written would emit vat_number.changed.
      registry.set(a, { valid: true, name: 'Alpha Neu GmbH', address: 'Wien' });
      registry.set(b, { valid: true, name: 'Beta Neu GmbH', address: 'Graz' });
      await adminCall('PATCH', `/admin/v1/accounts/${paused.accountId}`, { disabled: true });

      clock.advance(1.6 * DAY);
      registry.hold();
      const running = t.container.monitorScheduler.runOnce();
      await until(() => registry.heldCount() === 1);
      await adminCall('POST', `/admin/v1/keys/${revoked.id}/revoke`);
      registry.releaseAll();
      await running;
      assert.equal(
        registry.calls.filter((n) => n === b).length,
        1,
        "the disabled account's number is not asked",
      );
      assert.equal(await checks(), checksBefore, 'no check written');
      assert.deepEqual(
        (await events()).filter((e) => e.type === 'vat_number.changed'),
        [],
        'no change emitted',
      );

      // The disabled account's monitor is looked at again an hour later, and checked once enabled.
      await adminCall('PATCH', `/admin/v1/accounts/${paused.accountId}`, { disabled: false });
      clock.advance(HOUR);
      await t.container.monitorScheduler.drain();
      assert.equal(registry.calls.filter((n) => n === b).length, 2);
      assert.equal(registry.calls.filter((n) => n === a).length, 2, 'the revoked key is not asked again');
      assert.equal((await events()).filter((e) => e.type === 'vat_number.changed').length, 1);
    });
  });
}
