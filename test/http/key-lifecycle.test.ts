import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { randomBase62 } from '../../src/lib/crypto.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { snapshot } from '../helpers/db-snapshot.js';

// Keys through the admin API on SQLite and PostgreSQL: found by their prefix (taken literally), and
// rolled without giving the key a fresh month, a second roll of the old key, or a permanent old key.
for (const target of await databaseTargets()) {
  describe(`key prefixes and rolls (${target.name})`, { skip: target.skip }, () => {
    let db: TestDb;
    let t: TestApp;
    let admin: { authorization: string };
    let accountId: string;
    const clock = createManualClock('2026-11-29T10:00:00.000Z');
    /** The random parts of the next keys made; random ones after them. */
    const secrets: string[] = [];

    before(async () => {
      db = await target.open();
      t = await buildTestApp(
        { OPENVAT_STATUS_POLL_MS: '0' },
        {
          // The database outlives the app: it closes only itself.
          db: { ...db, close: async () => {} },
          clock,
          redis: null,
          keySecrets: () => secrets.shift() ?? randomBase62(32),
        },
      );
      admin = { authorization: `Bearer ${(await t.container.admin.createKey('ops', 'admin')).key}` };
      const account = await call('POST', '/admin/v1/accounts', { name: 'Lifecycle GmbH' });
      accountId = account.json().data.id;
    });
    after(async () => {
      await t.close();
      await db.dispose();
    });

    const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
      t.app.inject({ method, url, headers: admin, ...(payload === undefined ? {} : { payload }) });
    async function key(body: Record<string, unknown> = {}) {
      const created = await call('POST', '/admin/v1/keys', {
        account_id: accountId,
        plan: 'pro',
        mode: 'test',
        ...body,
      });
      assert.equal(created.statusCode, 201, created.body);
      return created.json().data as { id: string; key: string; prefix: string };
    }
    const validate = (secret: string) =>
      t.app.inject({
        method: 'GET',
        url: '/v1/validate?vat_number=DE100000008',
        headers: { authorization: `Bearer ${secret}` },
      });
    const listed = async (prefix: string) => {
      const response = await call('GET', `/admin/v1/keys?prefix=${encodeURIComponent(prefix)}&limit=200`);
      assert.equal(response.statusCode, 200, response.body);
      return (response.json().data as Array<{ id: string }>).map((k) => k.id).sort();
    };
    const shown = async (id: string) => (await call('GET', `/admin/v1/keys/${id}`)).json().data;

    it('GET /admin/v1/keys?prefix= matches the prefix a key shows, literally and with its case', async () => {
      secrets.push(`Xq7${randomBase62(29)}`, `xq7${randomBase62(29)}`);
      const upper = await key();
      const lower = await key();
      const live = await key({ mode: 'live' });
      assert.equal(upper.prefix, 'svc_test_Xq7' + upper.key.slice(12, 13));
      assert.deepEqual(await listed(upper.prefix), [upper.id]);
      assert.deepEqual(await listed('svc_test_Xq7'), [upper.id], 'case matters: svc_test_xq7 is another key');
      assert.deepEqual(await listed('svc_test_xq7'), [lower.id]);
      assert.deepEqual(await listed(live.prefix), [live.id]);
      const tests = await listed('svc_test_');
      assert.ok(tests.includes(upper.id) && tests.includes(lower.id) && !tests.includes(live.id));
      // `_` and `%` are characters of the prefix, never wildcards; nor is the escape character.
      assert.deepEqual(await listed('s_c_test_'), []);
      assert.deepEqual(await listed('svc%'), []);
      assert.deepEqual(await listed('svc\\_test_'), []);
      assert.deepEqual(await listed('%'), []);
    });

    it('a rolled key shares its monthly count with the key it replaces: 5 calls for a quota of 5', async () => {
      const old = await key({ monthly_quota: 5 });
      for (let i = 0; i < 3; i++) assert.equal((await validate(old.key)).statusCode, 200, `call ${i + 1}`);
      const rolled = await call('POST', `/admin/v1/keys/${old.id}/roll`, { overlap_seconds: 3_600 });
      assert.equal(rolled.statusCode, 201, rolled.body);
      const fresh = rolled.json().data as { id: string; key: string; usage_this_month: number };
      assert.equal(fresh.usage_this_month, 3, 'the new key starts where the old one is');
      assert.equal((await validate(fresh.key)).statusCode, 200);
      assert.equal((await validate(old.key)).statusCode, 200, 'the old key, in its overlap');
      const refused = await validate(fresh.key);
      assert.equal(refused.statusCode, 429, refused.body);
      assert.match(refused.json().error.message, /monthly quota of 5 calls is used up/);
      assert.equal((await validate(old.key)).statusCode, 429);
      assert.equal((await shown(old.id)).usage_this_month, 5);
      assert.equal((await shown(fresh.id)).usage_this_month, 5);

      // And again: the key rolled from the rolled one counts on the same month too.
      const again = await call('POST', `/admin/v1/keys/${fresh.id}/roll`, { overlap_seconds: 0 });
      assert.equal(again.statusCode, 201, again.body);
      assert.equal((await validate(again.json().data.key)).statusCode, 429);
      // The next month starts one count for them all.
      clock.set('2026-12-01T00:00:00.000Z');
      assert.equal((await validate(again.json().data.key)).statusCode, 200);
      assert.equal((await shown(again.json().data.id)).usage_this_month, 1);
      clock.set('2026-11-29T10:30:00.000Z');
    });

    it('a rolled key cannot be rolled again, and its overlap may end sooner but not be cleared or extended', async () => {
      const old = await key({ expires_at: '2027-06-30T00:00:00.000Z' });
      const rolled = await call('POST', `/admin/v1/keys/${old.id}/roll`, { overlap_seconds: 600 });
      assert.equal(rolled.statusCode, 201, rolled.body);
      const successor = rolled.json().data.id as string;
      const overlapEnd = '2026-11-29T10:40:00.000Z';
      assert.equal((await shown(old.id)).expires_at, overlapEnd);

      const before = await snapshot(db);
      const twice = await call('POST', `/admin/v1/keys/${old.id}/roll`, { overlap_seconds: 600 });
      assert.equal(twice.statusCode, 400);
      assert.equal(twice.json().error.code, 'invalid_format');
      assert.match(
        twice.json().error.message,
        new RegExp(`was rolled already, to ${successor}.*roll that key instead`),
      );
      for (const expires_at of [null, '2026-11-29T11:00:00.000Z', '2030-01-01T00:00:00.000Z']) {
        const patched = await call('PATCH', `/admin/v1/keys/${old.id}`, { expires_at });
        assert.equal(patched.statusCode, 400, `${expires_at}: ${patched.body}`);
        assert.equal(patched.json().error.code, 'invalid_format');
        assert.match(
          patched.json().error.message,
          new RegExp(
            `^expires_at: key ${old.id} was rolled to ${successor}; the end of its overlap \\(${overlapEnd}\\) may be brought forward, not ${expires_at === null ? 'cleared' : 'moved later'}`,
          ),
        );
      }
      assert.deepEqual(await snapshot(db), before, 'nothing stored');
      assert.equal((await shown(old.id)).expires_at, overlapEnd);

      // Other settings change as before, and the overlap may end sooner.
      assert.equal((await call('PATCH', `/admin/v1/keys/${old.id}`, { name: 'leaving' })).statusCode, 200);
      const sooner = await call('PATCH', `/admin/v1/keys/${old.id}`, {
        expires_at: '2026-11-29T10:35:00.000Z',
      });
      assert.equal(sooner.statusCode, 200, sooner.body);
      assert.equal(sooner.json().data.expires_at, '2026-11-29T10:35:00.000Z');
      clock.set('2026-11-29T10:35:00.000Z');
      const ended = await validate(old.key);
      assert.equal(ended.statusCode, 401);
      assert.match(
        ended.json().error.message,
        /rolled to a new key; its overlap ended at 2026-11-29T10:35:00.000Z/,
      );
      assert.equal(
        (await shown(successor)).expires_at,
        '2027-06-30T00:00:00.000Z',
        'the successor keeps the expiry',
      );
    });
  });
}
