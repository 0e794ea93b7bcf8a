import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { createManualClock } from '../../src/lib/clock.js';
import { createFakeRegistry } from '../fakes/fake-registry.js';
import { createFakeDns } from '../fakes/webhook-dns.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { wellFormedNumbers } from '../helpers/batch-numbers.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

for (const target of await databaseTargets()) {
  describe(`monitors on ${target.name}`, { skip: target.skip }, () => {
    let db: TestDb;
    let shared: Db;
    const apps: TestApp[] = [];
    const clock = createManualClock('2026-11-23T10:00:00.000Z');
    const registry = createFakeRegistry();
    const dns = createFakeDns({ 'hooks.example.test': '93.184.216.34' });

    async function instance(env: Record<string, string> = {}): Promise<TestApp> {
      const t = await buildTestApp(
        {
          OPENVAT_STATUS_POLL_MS: '0',
          OPENVAT_REGISTRY_BACKOFF_MS: '1',
          OPENVAT_MONITOR_LEASE_MS: '60000',
          OPENVAT_MONITOR_RETRY_BACKOFF_MS: '60000',
          OPENVAT_MONITOR_STALE_AFTER_MS: String(2 * HOUR),
          OPENVAT_MONITOR_QUIET_WINDOWS: 'none',
          OPENVAT_MONITORS_BUSINESS: '100000',
          ...env,
        },
        { db: shared, clock, registries: registry.ports, dns },
      );
      apps.push(t);
      return t;
    }

    // Each test has its own database (the clock moves every monitor of a database).
    beforeEach(async () => {
      db = await target.open();
      shared = { ...db, close: async () => {} };
      clock.set('2026-11-23T10:00:00.000Z');
    });
    afterEach(async () => {
      for (const t of apps.splice(0)) await t.close();
      await db.dispose();
    });

    const bulk = (t: TestApp, key: TestKey, numbers: string[], interval = 'daily') =>
      t.app.inject({
        method: 'POST',
        url: '/v1/monitors/bulk',
        headers: key.headers,
        payload: { interval, monitors: numbers.map((vat_number) => ({ vat_number })) },
      });
    const monitorRows = (keyId: string) =>
      shared.kysely.selectFrom('monitors').selectAll().where('key_id', '=', keyId).execute();
    const checkRows = (keyId: string) =>
      shared.kysely
        .selectFrom('monitor_checks')
        .innerJoin('monitors', 'monitors.id', 'monitor_checks.monitor_id')
        .selectAll('monitor_checks')
        .where('monitors.key_id', '=', keyId)
        .execute();

    it("another key's delete touches nothing; the owner's delete takes the checks and changes with the monitor", async () => {
      const t = await instance();
      const owner = await t.key('business', 'test');
      const other = await t.key('business', 'test');
      const created = await t.app.inject({
        method: 'POST',
        url: '/v1/monitors',
        headers: owner.headers,
        payload: { vat_number: 'DE930000007', interval: 'daily' },
      });
      const id = created.json().data.monitor.id as string;
      // The second check of this test number finds a change.
      await t.app.inject({ method: 'POST', url: `/v1/monitors/${id}/check`, headers: owner.headers });
      const history = async () => ({
        checks: (
          await shared.kysely.selectFrom('monitor_checks').select('id').where('monitor_id', '=', id).execute()
        ).length,
        changes: (
          await shared.kysely
            .selectFrom('monitor_changes')
            .select('id')
            .where('monitor_id', '=', id)
            .execute()
        ).length,
      });
      assert.deepEqual(await history(), { checks: 2, changes: 1 });
      const refused = await t.app.inject({
        method: 'DELETE',
        url: `/v1/monitors/${id}`,
        headers: other.headers,
      });
      assert.equal(refused.statusCode, 404);
      assert.deepEqual(await history(), { checks: 2, changes: 1 });
      const deleted = await t.app.inject({
        method: 'DELETE',
        url: `/v1/monitors/${id}`,
        headers: owner.headers,
      });
      assert.equal(deleted.statusCode, 204);
      assert.deepEqual(await history(), { checks: 0, changes: 0 });
    });

    it('spreads re-checks evenly over the interval and keeps them out of quiet windows', async () => {
      const t = await instance({ OPENVAT_MONITOR_PER_COUNTRY: '8' });
      const key = await t.key('business', 'test');
      const numbers = wellFormedNumbers('AT', 960, 5_000);
      const res = await bulk(t, key, numbers);
      assert.equal(res.json().data.summary.created, 960);
      assert.equal(await t.container.monitorScheduler.drain(), 960);
      const rows = await monitorRows(key.id);
      const hours = new Array<number>(24).fill(0);
      for (const row of rows) {
        const next = Date.parse(row.next_check_at);
        assert.ok(next >= clock.millis() + DAY / 2 && next < clock.millis() + 1.5 * DAY, row.next_check_at);
        hours[new Date(next).getUTCHours()] = (hours[new Date(next).getUTCHours()] ?? 0) + 1;
      }
      // 40 per hour on average; no hour gets a burst and none is empty.
      for (const n of hours) assert.ok(n >= 15 && n <= 70, `checks per hour: ${hours.join(',')}`);

      const quiet = await instance({
        OPENVAT_MONITOR_QUIET_WINDOWS: 'DE=21:00-00:30',
        OPENVAT_MONITOR_PER_COUNTRY: '8',
      });
      const deKey = await quiet.key('business', 'test');
      await bulk(quiet, deKey, wellFormedNumbers('DE', 300, 7_000));
      assert.equal(await quiet.container.monitorScheduler.drain(), 300);
      for (const row of await monitorRows(deKey.id)) {
        const at = new Date(row.next_check_at);
        const minute = at.getUTCHours() * 60 + at.getUTCMinutes();
        assert.ok(
          minute >= 30 && minute < 21 * 60,
          `DE check at ${row.next_check_at} is in the quiet window`,
        );
      }
    });

    it('numbers imported during a quiet window get their first check after it', async () => {
      const t = await instance({
        OPENVAT_MONITOR_QUIET_WINDOWS: 'DE=21:00-00:30',
        OPENVAT_MONITOR_PER_COUNTRY: '8',
      });
      const key = await t.key('business', 'live');
      clock.set('2026-11-23T22:00:00.000Z');
      const res = await bulk(t, key, [
        ...wellFormedNumbers('DE', 3, 80_000),
        ...wellFormedNumbers('AT', 2, 80_000),
      ]);
      assert.equal(res.json().data.summary.created, 5);
      const before = registry.calls.length;
      assert.equal(await t.container.monitorScheduler.drain(), 2, 'AT now');
      const de = (await monitorRows(key.id)).filter((r) => r.country === 'DE');
      assert.ok(de.every((r) => r.next_check_at === '2026-11-24T01:30:00.000Z' && r.checks === 0));
      clock.set('2026-11-24T01:30:00.000Z');
      assert.equal(await t.container.monitorScheduler.drain(), 3, 'DE after the window');
      assert.equal(registry.calls.length - before, 5);
    });

    it('two instances share the due checks without checking any monitor twice', async () => {
      const a = await instance({ OPENVAT_MONITOR_PER_COUNTRY: '4' });
      const b = await instance({ OPENVAT_MONITOR_PER_COUNTRY: '4' });
      const key = await a.key('business', 'live');
      const numbers = [
        ...wellFormedNumbers('DE', 60, 20_000),
        ...wellFormedNumbers('FR', 60, 20_000),
        ...wellFormedNumbers('NL', 60, 20_000),
      ];
      await bulk(a, key, numbers);
      const before = registry.calls.length;
      const [na, nb] = await Promise.all([
        a.container.monitorScheduler.drain(),
        b.container.monitorScheduler.drain(),
      ]);
      assert.equal(na + nb, 180);
      assert.ok(na > 0 && nb > 0, `both instances worked (${na} + ${nb})`);
      const calls = registry.calls.slice(before);
      assert.equal(calls.length, 180);
      assert.equal(new Set(calls).size, 180, 'no number asked twice');
      const checks = await checkRows(key.id);
      assert.equal(checks.length, 180);
      assert.equal(new Set(checks.map((c) => c.monitor_id)).size, 180);
      for (const row of await monitorRows(key.id)) {
        assert.equal(row.checks, 1);
        assert.equal(row.claimed_by, null);
        assert.equal(row.status, 'valid');
      }
    });

    it('survives a killed instance: its claimed checks come back after the lease, and the schedule persists', async () => {
      const dead = await instance();
      const key = await dead.key('business', 'live');
      await bulk(dead, key, wellFormedNumbers('AT', 5, 30_000));
      // The instance claims and dies before checking (no release, no write).
      const claimed = await dead.container.monitors.claimDue(10);
      assert.equal(claimed.length, 1, 'one AT check in flight per instance (the per-country gate)');
      const survivor = await instance({ OPENVAT_MONITOR_PER_COUNTRY: '8' });
      assert.equal(await survivor.container.monitorScheduler.drain(), 4, 'the leased monitor is left alone');
      clock.advance(61_000);
      assert.equal(
        await survivor.container.monitorScheduler.drain(),
        1,
        'claimed again once the lease expired',
      );
      const rows = await monitorRows(key.id);
      assert.ok(rows.every((r) => r.checks === 1 && r.status === 'valid'));
      // A fresh instance finds nothing due until the stored next check times.
      const restarted = await instance({ OPENVAT_MONITOR_PER_COUNTRY: '8' });
      assert.equal(await restarted.container.monitorScheduler.drain(), 0);
      const latest = Math.max(...rows.map((r) => Date.parse(r.next_check_at)));
      clock.set(new Date(latest));
      assert.equal(await restarted.container.monitorScheduler.drain(), 5, 'every monitor again, a day later');
      assert.equal(await restarted.container.monitorScheduler.drain(), 0);
    });

    it('detects each kind of change on scheduled checks, with webhook deliveries and audit records', async () => {
      const t = await instance({ OPENVAT_MONITOR_PER_COUNTRY: '8', OPENVAT_WEBHOOKS_ALLOW_PRIVATE: 'false' });
      const key = await t.key('business', 'live');
      const hook = await t.app.inject({
        method: 'POST',
        url: '/v1/webhooks',
        headers: key.headers,
        payload: { url: 'https://hooks.example.test/vat' },
      });
      assert.equal(hook.statusCode, 201, hook.body);
      const [toInvalid, toValid, renamed, moved, same] = wellFormedNumbers('DE', 5, 40_000) as [
        string,
        string,
        string,
        string,
        string,
      ];
      registry.set(toInvalid, { valid: true, name: 'Alpha GmbH', address: 'A-Straße 1' });
      registry.set(toValid, { valid: false, name: null, address: null });
      registry.set(renamed, { valid: true, name: 'Beta GmbH', address: 'B-Straße 1' });
      registry.set(moved, { valid: true, name: 'Gamma GmbH', address: 'C-Straße 1' });
      registry.set(same, { valid: true, name: 'Delta  GmbH', address: 'D-Straße 1' });
      const ids = new Map<string, string>();
      for (const vat of [toInvalid, toValid, renamed, moved, same]) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/monitors',
          headers: key.headers,
          payload: { vat_number: vat, interval: 'daily' },
        });
        assert.equal(res.statusCode, 201);
        ids.set(vat, res.json().data.monitor.id);
      }
      registry.set(toInvalid, { valid: false, name: null, address: null });
      registry.set(toValid, { valid: true, name: 'Epsilon AG', address: 'E-Weg 2' });
      registry.set(renamed, { valid: true, name: 'Beta Holding GmbH', address: 'B-Straße 1' });
      registry.set(moved, { valid: true, name: 'Gamma GmbH', address: 'C-Allee 9' });
      registry.set(same, { valid: true, name: 'DELTA GMBH', address: 'D-Straße 1' });
      const before = registry.calls.length;
      clock.advance(1.6 * DAY);
      assert.equal(await t.container.monitorScheduler.drain(), 5);
      assert.equal(registry.calls.length - before, 5, 'scheduled checks ask the registry, not the cache');

      const expect: Array<[string, string, string | null, string | null]> = [
        [toInvalid, 'became_invalid', 'valid', 'invalid'],
        [toValid, 'became_valid', 'invalid', 'valid'],
        [renamed, 'name_changed', 'Beta GmbH', 'Beta Holding GmbH'],
        [moved, 'address_changed', 'C-Straße 1', 'C-Allee 9'],
      ];
      for (const [vat, type, from, to] of expect) {
        const got = await t.app.inject({
          method: 'GET',
          url: `/v1/monitors/${ids.get(vat)}`,
          headers: key.headers,
        });
        const data = got.json().data;
        assert.equal(data.changes.length, 1, vat);
        assert.equal(data.changes[0].type, type);
        assert.equal(data.changes[0].before, from);
        assert.equal(data.changes[0].after, to);
        assert.equal(data.checks[0].trigger, 'scheduled');
        const audit = await t.app.inject({
          method: 'GET',
          url: `/v1/audits/${data.checks[0].request_id}`,
          headers: key.headers,
        });
        assert.equal(audit.statusCode, 200);
        assert.equal(audit.json().data.endpoint, 'monitor_check');
        assert.equal(audit.json().data.response.data.vat_number, vat);
        assert.equal(audit.json().data.response.meta.source_status, 'live');
      }
      const sameView = await t.app.inject({
        method: 'GET',
        url: `/v1/monitors/${ids.get(same)}`,
        headers: key.headers,
      });
      assert.deepEqual(sameView.json().data.changes, [], 'case and spacing differences are no change');

      const deliveries = await shared.kysely
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('key_id', '=', key.id)
        .where('event_type', '=', 'vat_number.changed')
        .execute();
      assert.equal(deliveries.length, 4, 'one queued delivery per change event');
      const body = JSON.parse(deliveries.find((d) => d.body.includes('became_invalid'))?.body ?? '{}');
      assert.equal(body.event, 'vat_number.changed');
      assert.equal(body.data.data.monitor.vat_number, toInvalid);
      assert.equal(body.data.data.changes[0].before, 'valid');
    });

    it('an outage is never a change: the state is kept, retried with backoff, stale once after the configured time', async () => {
      const t = await instance({
        OPENVAT_MONITOR_PER_COUNTRY: '8',
        OPENVAT_MONITOR_STALE_AFTER_MS: String(2 * DAY),
      });
      const key = await t.key('business', 'live');
      const [vat] = wellFormedNumbers('NL', 1, 50_000) as [string];
      registry.set(vat, { valid: true, name: 'Zeta BV', address: 'Z-straat 1' });
      const created = await t.app.inject({
        method: 'POST',
        url: '/v1/monitors',
        headers: key.headers,
        payload: { vat_number: vat, interval: 'daily' },
      });
      const id = created.json().data.monitor.id;
      const lastSuccess = clock.millis();
      registry.set(vat, 'down');
      clock.advance(1.6 * DAY);
      const load = async () => {
        const [row] = await shared.kysely.selectFrom('monitors').selectAll().where('id', '=', id).execute();
        assert.ok(row);
        return row;
      };
      const events = async (type: string) =>
        (
          await shared.kysely
            .selectFrom('events')
            .select('type')
            .where('key_id', '=', key.id)
            .where('type', '=', type)
            .execute()
        ).length;
      assert.equal(await t.container.monitorScheduler.drain(), 1);
      let row = await load();
      assert.equal(row.status, 'valid');
      assert.equal(row.stale, 0);
      assert.equal(row.failures, 1);
      assert.ok(Date.parse(row.next_check_at) - clock.millis() <= 60_000, 'retried soon');
      assert.equal(await t.container.monitorScheduler.drain(), 0, 'not before its retry time');
      const gaps: number[] = [];
      while (clock.millis() < lastSuccess + 2 * DAY + 7 * HOUR) {
        gaps.push(Date.parse(row.next_check_at) - clock.millis());
        clock.set(row.next_check_at);
        assert.equal(await t.container.monitorScheduler.drain(), 1);
        row = await load();
        assert.equal(row.status, 'valid', 'the last known state is kept');
        assert.equal(row.stale, clock.millis() - lastSuccess >= 2 * DAY ? 1 : 0);
      }
      assert.ok(gaps.length >= 5 && gaps.length < 30, `retries: ${gaps.length}`);
      assert.ok((gaps.at(-1) ?? 0) > (gaps[0] ?? 0) * 4, 'the retries back off');
      assert.ok(gaps.every((g) => g <= 6 * HOUR));
      assert.equal(await events('vat_number.changed'), 0);
      assert.equal(await events('vat_number.check_failed'), 1, 'sent once, not at every retry');

      registry.set(vat, { valid: true, name: 'Zeta BV', address: 'Z-straat 1' });
      clock.set(row.next_check_at);
      assert.equal(await t.container.monitorScheduler.drain(), 1);
      row = await load();
      assert.equal(row.stale, 0, 'a successful check clears the flag');
      assert.equal(row.failures, 0);
      assert.ok(Date.parse(row.next_check_at) - clock.millis() >= DAY / 2, 'back on its daily slot');
      assert.equal(await events('vat_number.changed'), 0);
    });

    it("stops checking a revoked key's monitors, and purges checks past their retention (changes stay)", async () => {
      const t = await instance({
        OPENVAT_MONITOR_PER_COUNTRY: '8',
        OPENVAT_MONITOR_CHECK_RETENTION_DAYS: '30',
      });
      const kept = await t.key('business', 'live');
      const revoked = await t.key('business', 'live');
      const [a, b] = wellFormedNumbers('AT', 2, 70_000) as [string, string];
      registry.set(a, { valid: true, name: 'Eta GmbH', address: 'Wien' });
      const create = (key: TestKey, vat: string) =>
        t.app.inject({
          method: 'POST',
          url: '/v1/monitors',
          headers: key.headers,
          payload: { vat_number: vat, interval: 'daily' },
        });
      const monitor = (await create(kept, a)).json().data.monitor.id;
      await create(revoked, b);
      registry.set(a, { valid: true, name: 'Eta Neu GmbH', address: 'Wien' });
      assert.equal((await t.container.keys.revokeKey(revoked.id)).kind, 'ok');
      const before = registry.calls.length;
      clock.advance(1.6 * DAY);
      assert.equal(await t.container.monitorScheduler.drain(), 2);
      assert.deepEqual(registry.calls.slice(before), [a], "the revoked key's number is not asked");
      const [paused] = await monitorRows(revoked.id);
      assert.equal(paused?.next_check_at, '9999-12-31T00:00:00.000Z');
      clock.advance(2 * DAY);
      assert.equal(await t.container.monitorScheduler.drain(), 1);

      const count = async () =>
        (
          await shared.kysely
            .selectFrom('monitor_checks')
            .select('id')
            .where('monitor_id', '=', monitor)
            .execute()
        ).length;
      assert.equal(await count(), 3);
      clock.advance(29 * DAY);
      assert.equal(
        await t.container.monitors.purgeHistory(1),
        3,
        'checks older than 30 days (both keys), in batches',
      );
      assert.equal(await count(), 1);
      const got = await t.app.inject({
        method: 'GET',
        url: `/v1/monitors/${monitor}`,
        headers: kept.headers,
      });
      assert.equal(got.json().data.changes.length, 1, 'the change outlives its check');
      assert.equal(got.json().data.changes[0].type, 'name_changed');
    });

    it('priority under interactive load: queued scheduled checks never hold up an interactive validation', async () => {
      const t = await instance({ OPENVAT_REGISTRY_CONCURRENCY: '2' });
      const key = await t.key('business', 'live');
      await bulk(t, key, wellFormedNumbers('DE', 40, 60_000));
      const [interactive] = wellFormedNumbers('DE', 1, 61_000) as [string];
      registry.hold();
      const started = registry.calls.length;
      const scheduled = t.container.monitorScheduler.runOnce();
      await waitFor(() => registry.calls.length > started);
      // 40 checks are due and the scheduler has 32 slots, yet it keeps one DE check in flight.
      assert.deepEqual(t.container.monitors.inFlight(), { DE: 1 });
      const validation = t.app.inject({
        method: 'GET',
        url: `/v1/validate?vat_number=${interactive}&cache=false`,
        headers: key.headers,
      });
      await waitFor(() => registry.calls.includes(interactive));
      assert.equal(
        registry.calls.length - started,
        2,
        'the interactive call went out next to the one scheduled check',
      );
      const permits = (await t.container.liveAnswers.permits.snapshot()).find((p) => p.key === 'vies:DE');
      assert.deepEqual(
        permits,
        { key: 'vies:DE', inFlight: 2, queued: 0, limit: 2 },
        'nothing waits for a slot',
      );
      registry.releaseAll();
      const res = await validation;
      assert.equal(res.statusCode, 200);
      assert.equal(await scheduled, 1);
    });
  });
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  assert.ok(condition(), 'condition not reached');
}
