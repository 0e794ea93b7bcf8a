import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { createManualClock } from '../../src/lib/clock.js';
import { createFakeRegistry } from '../fakes/fake-registry.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { wellFormedNumbers } from '../helpers/batch-numbers.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { redisSkip } from '../helpers/redis.js';
import { redisPrefix } from '../helpers/resources.js';

// Monthly quotas on /v1 through the admin API's keys, on SQLite and PostgreSQL: counted per UTC
// month, stored answers not counted, and exact across two instances on one database.
for (const target of await databaseTargets()) {
  describe(`monthly quotas (${target.name})`, { skip: target.skip }, () => {
    let db: TestDb;
    let shared: Db;
    const apps: TestApp[] = [];
    const clock = createManualClock('2026-11-27T10:00:00.000Z');
    const registry = createFakeRegistry();
    let admin: { authorization: string };

    async function instance(env: Record<string, string> = {}) {
      const t = await buildTestApp(
        { OPENVAT_STATUS_POLL_MS: '0', ...env },
        { db: shared, clock, registries: registry.ports, ...(env.REDIS_URL ? {} : { redis: null }) },
      );
      apps.push(t);
      return t;
    }

    before(async () => {
      db = await target.open();
      // The database outlives the instances: each closes only itself.
      shared = { ...db, close: async () => {} };
      const first = await instance();
      admin = { authorization: `Bearer ${(await first.container.admin.createKey('ops', 'admin')).key}` };
    });
    after(async () => {
      for (const t of apps) await t.close();
      await db.dispose();
    });

    async function keyWith(t: TestApp, body: Record<string, unknown>) {
      const account = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/accounts',
        headers: admin,
        payload: { name: 'Quota GmbH' },
      });
      assert.equal(account.statusCode, 201, account.body);
      const created = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/keys',
        headers: admin,
        payload: { account_id: account.json().data.id, plan: 'pro', mode: 'test', ...body },
      });
      assert.equal(created.statusCode, 201, created.body);
      return created.json().data as { id: string; key: string };
    }
    const validate = (t: TestApp, key: string, number = 'DE100000008', extra = '') =>
      t.app.inject({
        method: 'GET',
        url: `/v1/validate?vat_number=${number}${extra}`,
        headers: { authorization: `Bearer ${key}` },
      });
    const usageThisMonth = async (t: TestApp, id: string) =>
      (await t.app.inject({ method: 'GET', url: `/admin/v1/keys/${id}`, headers: admin })).json().data
        .usage_this_month as number;

    it('a test key with a quota of 3: three calls, then 429 rate_limited until the next month (UTC)', async () => {
      clock.set('2026-11-27T10:00:00.000Z');
      const t = apps[0] as TestApp;
      const key = await keyWith(t, { monthly_quota: 3 });
      // A refused call (a malformed number) does not count.
      assert.equal((await validate(t, key.key, 'DE123')).statusCode, 400);
      for (let i = 0; i < 3; i++) assert.equal((await validate(t, key.key)).statusCode, 200, `call ${i + 1}`);
      const refused = await validate(t, key.key);
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.json().error.code, 'rate_limited');
      assert.match(refused.json().error.message, /monthly quota of 3 calls/);
      assert.match(refused.json().error.message, /2026-12-01T00:00:00\.000Z/);
      // 2026-11-27T10:00Z to 2026-12-01T00:00Z: 3 days and 14 hours.
      assert.equal(refused.headers['retry-after'], String(3 * 86_400 + 14 * 3_600));
      assert.equal(await usageThisMonth(t, key.id), 3);
      // Other routes of the key are not counted, nor refused.
      const usage = await t.app.inject({
        method: 'GET',
        url: '/v1/usage',
        headers: { authorization: `Bearer ${key.key}` },
      });
      assert.equal(usage.statusCode, 200);

      clock.set('2026-11-30T23:59:59.500Z');
      const lastSecond = await validate(t, key.key);
      assert.equal(lastSecond.statusCode, 429);
      assert.equal(lastSecond.headers['retry-after'], '1');
      clock.set('2026-12-01T00:00:00.000Z');
      assert.equal((await validate(t, key.key)).statusCode, 200, 'a new month, a new quota');
      assert.equal(await usageThisMonth(t, key.id), 1);

      // Raising the quota through the admin API applies at once.
      const patched = await t.app.inject({
        method: 'PATCH',
        url: `/admin/v1/keys/${key.id}`,
        headers: admin,
        payload: { monthly_quota: 0 },
      });
      assert.equal(patched.statusCode, 200, patched.body);
      assert.equal((await validate(t, key.key)).statusCode, 429, 'a quota of 0 refuses every call');
    });

    it('answers from the cache do not count on a live key', async () => {
      clock.set('2026-11-27T10:00:00.000Z');
      const t = apps[0] as TestApp;
      const key = await keyWith(t, { mode: 'live', monthly_quota: 2 });
      const [a, b, c] = wellFormedNumbers('DE', 3, 700) as [string, string, string];
      const first = await validate(t, key.key, a);
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(first.json().meta.cached, false);
      for (let i = 0; i < 3; i++) {
        const again = await validate(t, key.key, a);
        assert.equal(again.statusCode, 200);
        assert.equal(again.json().meta.cached, true, 'served from the cache');
      }
      assert.equal(await usageThisMonth(t, key.id), 1, 'stored answers are not counted');
      assert.equal((await validate(t, key.key, b)).statusCode, 200);
      const beyond = await validate(t, key.key, c);
      assert.equal(beyond.statusCode, 429, beyond.body);
      assert.equal(beyond.json().error.code, 'rate_limited');
      assert.equal(registry.calls.includes(c), false, 'a call beyond the quota asks no registry');
      // Beyond the quota, what the cache answers is still served, and not counted…
      const stored = await validate(t, key.key, a);
      assert.equal(stored.statusCode, 200, stored.body);
      assert.equal(stored.json().meta.cached, true);
      // …but not a forced live call, nor a call with a requester (always live).
      assert.equal((await validate(t, key.key, a, '&cache=false')).statusCode, 429);
      assert.equal((await validate(t, key.key, a, `&requester_vat_number=${b}`)).statusCode, 429);
      assert.equal(await usageThisMonth(t, key.id), 2);
    });

    it('a confirmation replayed for its Idempotency-Key does not count again', async () => {
      clock.set('2026-11-27T10:00:00.000Z');
      const t = apps[0] as TestApp;
      const key = await keyWith(t, {
        plan: 'business',
        monthly_quota: 2,
        default_requester_vat: 'DE136695976',
      });
      const confirm = (vat: string, idempotencyKey: string) =>
        t.app.inject({
          method: 'POST',
          url: '/v1/confirm',
          headers: { authorization: `Bearer ${key.key}`, 'idempotency-key': idempotencyKey },
          payload: { vat_number: vat, company: { name: 'Beispiel GmbH', town: 'Wien' } },
        });
      const once = '0b6f2a8e-4b1c-4c8e-9f5a-2d7e1c3b9a01';
      const first = await confirm('ATU12345678', once);
      assert.equal(first.statusCode, 200, first.body);
      const replay = await confirm('ATU12345678', once);
      assert.equal(replay.statusCode, 200, replay.body);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body, first.body);
      assert.equal(await usageThisMonth(t, key.id), 1, 'the replay is not counted');
      assert.equal((await confirm('FR40303265045', '0b6f2a8e-4b1c-4c8e-9f5a-2d7e1c3b9a02')).statusCode, 200);
      assert.equal(await usageThisMonth(t, key.id), 2);
    });

    it("a plan's default quota (OPENVAT_MONTHLY_QUOTA_<PLAN>) applies to keys without their own; decide counts, usage does not", async () => {
      clock.set('2026-11-27T10:00:00.000Z');
      const t = await instance({ OPENVAT_MONTHLY_QUOTA_PRO: '2' });
      const key = await keyWith(t, {});
      const decide = () =>
        t.app.inject({
          method: 'POST',
          url: '/v1/decide',
          headers: { authorization: `Bearer ${key.key}` },
          payload: { seller_vat: 'DE100000008', buyer_vat: 'FR40303265045' },
        });
      const first = await decide();
      assert.equal(first.statusCode, 200, first.body);
      assert.equal((await validate(t, key.key)).statusCode, 200);
      const usage = await t.app.inject({
        method: 'GET',
        url: '/v1/usage',
        headers: { authorization: `Bearer ${key.key}` },
      });
      assert.equal(usage.statusCode, 200, 'not counted, not refused');
      const refused = await decide();
      assert.equal(refused.statusCode, 429);
      assert.match(refused.json().error.message, /monthly quota of 2 calls/);
      assert.equal(await usageThisMonth(t, key.id), 2);
      // Its own quota takes precedence over the plan's.
      await t.app.inject({
        method: 'PATCH',
        url: `/admin/v1/keys/${key.id}`,
        headers: admin,
        payload: { monthly_quota: 3 },
      });
      assert.equal((await validate(t, key.key)).statusCode, 200);
      assert.equal((await validate(t, key.key)).statusCode, 429);
    });

    for (const withRedis of [false, true]) {
      it(`holds exactly across two instances${withRedis ? ' with Redis' : ''}: 50 concurrent calls, quota 20, 20 accepted`, async (context) => {
        const skip = withRedis ? await redisSkip() : false;
        if (skip) return context.skip(skip);
        clock.set('2026-11-27T10:00:00.000Z');
        const env: Record<string, string> = withRedis
          ? {
              REDIS_URL: process.env.TEST_REDIS_URL as string,
              OPENVAT_REDIS_PREFIX: redisPrefix(`quota${target.name}`),
            }
          : {};
        const a = await instance(env);
        const b = await instance(env);
        const key = await keyWith(a, { monthly_quota: 20 });
        const answers = await Promise.all(
          Array.from({ length: 50 }, (_, i) => validate(i % 2 === 0 ? a : b, key.key)),
        );
        const codes = answers.map((r) => r.statusCode);
        assert.equal(codes.filter((c) => c === 200).length, 20, codes.join(','));
        assert.equal(codes.filter((c) => c === 429).length, 30, codes.join(','));
        assert.equal(await usageThisMonth(b, key.id), 20);
      });
    }
  });
}
