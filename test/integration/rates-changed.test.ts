import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { verifyWebhook } from '../../src/modules/webhooks/verify.js';
import { createTedbClient } from '../../src/registries/tedb.js';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

const FI_BEFORE = {
  standard_rate: 25.5,
  reduced_rates: [10, 13.5],
  super_reduced_rate: null,
  parking_rate: null,
};
const FI_AFTER = {
  standard_rate: 24,
  reduced_rates: [10, 13.5],
  super_reduced_rate: null,
  parking_rate: null,
};

interface Delivered {
  path: string;
  event: string;
  header: string | undefined;
  data: {
    country_code: string;
    country_name: string;
    status: string;
    effective_from: string;
    time_zone: string;
    before: typeof FI_BEFORE;
    after: typeof FI_AFTER;
    source: string;
    data_version: string;
  };
  meta: { request_id: string };
}

for (const target of await databaseTargets()) {
  describe(`rates.changed webhooks on ${target.name}`, { skip: target.skip }, () => {
    let sim: SimulatorServer;
    let tedbUrl: string;
    let receiver: WebhookReceiver;
    let db: TestDb;
    let t: TestApp;
    let owner: TestKey;
    let other: TestKey;
    const clock = createManualClock('2026-11-27T10:00:00Z');
    const secrets = new Map<string, string>();

    const env = () => ({ OPENVAT_TEDB_URL: tedbUrl, OPENVAT_WEBHOOKS_ALLOW_PRIVATE: 'true' });
    const app = () =>
      buildTestApp(env(), {
        clock,
        db: { ...db, close: async () => {} },
        tedb: createTedbClient({ url: tedbUrl, timeoutMs: 30_000 }),
      });

    before(async () => {
      receiver = await startWebhookReceiver();
    });
    after(async () => {
      await receiver.close();
    });
    beforeEach(async () => {
      clock.set('2026-11-27T10:00:00Z');
      // A simulator per test: no kept-alive connection of an earlier test is reused as it closes.
      sim = createSimulatorServer({});
      tedbUrl = (await sim.listen(0, '127.0.0.1')).urls.OPENVAT_TEDB_URL as string;
      receiver.received.length = 0;
      secrets.clear();
      db = await target.open();
      t = await app();
      owner = await t.key('pro', 'live');
      other = await t.key('business', 'test');
    });
    afterEach(async () => {
      await t.close();
      await db.dispose();
      await sim.close();
    });

    async function register(key: TestKey, path: string, events?: unknown) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/webhooks',
        headers: key.headers,
        payload: { url: `${receiver.origin}${path}`, ...(events === undefined ? {} : { events }) },
      });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json() as { id: string; secret: string; events?: string[] };
      secrets.set(path, body.secret);
      return body;
    }

    /** Sends every queued delivery (of every app given) and returns what the receiver got, parsed and verified. */
    async function delivered(...apps: TestApp[]): Promise<Delivered[]> {
      for (const a of apps.length ? apps : [t]) await a.container.webhookWorker.drain();
      return (
        receiver.received
          .map((r) => {
            const verified = verifyWebhook({
              secret: secrets.get(r.path) ?? '',
              headers: r.headers,
              rawBody: r.body,
              now: new Date(Number(r.headers['service-timestamp']) * 1000),
            });
            assert.ok(verified.ok, `signed for ${r.path}`);
            const body = JSON.parse(r.body) as {
              event: string;
              data: Omit<Delivered, 'path' | 'event' | 'header'>;
            };
            return {
              path: r.path,
              event: body.event,
              header: r.headers['service-event'] as string | undefined,
              ...body.data,
            };
          })
          // The curated dataset's own periods send events too when the clock passes their first day
          // (Vietnam's of 2027-01-01 among the dates here); this file is about changes a sync learns.
          .filter((d) => d.data.source !== 'curated')
      );
    }

    const byPath = (list: Delivered[]) => [...list].sort((a, b) => (a.path < b.path ? -1 : 1));

    it('an announcement learnt by a sync, then the day it applies in Helsinki: one event each, only to endpoints that list rates.changed', async () => {
      const subscribed = await register(owner, '/rates', ['rates.changed']);
      assert.deepEqual(subscribed.events, ['rates.changed']);
      const plain = await register(owner, '/plain');
      assert.equal(plain.events, undefined, 'a registration without events answers as before');
      await register(other, '/both', ['validation.completed', 'rates.changed', 'rates.changed']);
      const list = await t.app.inject({ method: 'GET', url: '/v1/webhooks', headers: owner.headers });
      assert.deepEqual(
        (list.json() as { data: { url: string; events: string[] | null }[] }).data.map((e) => [
          e.url.replace(receiver.origin, ''),
          e.events,
        ]),
        [
          ['/rates', ['rates.changed']],
          ['/plain', null],
        ],
      );
      const mine = await t.app.inject({ method: 'GET', url: '/v1/webhooks', headers: other.headers });
      assert.deepEqual(
        (mine.json() as { data: { events: string[] }[] }).data[0]?.events,
        ['validation.completed', 'rates.changed'],
        'each event once, in the documented order',
      );

      // A sync that learns nothing new sends nothing.
      assert.equal((await t.container.ratesUpdates.syncNow()).kind, 'synced');
      assert.deepEqual(await delivered(), []);

      sim.control({ tedb: { announce: { country: 'FI', from: '2027-01-01', standard: 24 } } });
      clock.set('2026-11-28T10:00:00Z');
      assert.deepEqual(await t.container.ratesUpdates.runIfDue(), {
        kind: 'synced',
        applied: 1,
        held: 0,
        retired: 0,
      });
      const version = (await t.app.inject({ method: 'GET', url: '/v1/rates/fi' })).json().meta.data_version;
      const announced = byPath(await delivered());
      assert.deepEqual(
        announced.map((d) => d.path),
        ['/both', '/rates'],
      );
      for (const d of announced) {
        assert.equal(d.event, 'rates.changed');
        assert.equal(d.header, 'rates.changed');
        assert.deepEqual(d.data, {
          country_code: 'fi',
          country_name: 'Finland',
          status: 'announced',
          effective_from: '2027-01-01',
          time_zone: 'Europe/Helsinki',
          before: FI_BEFORE,
          after: FI_AFTER,
          source: 'tedb',
          data_version: version,
        });
      }
      assert.equal(announced[0]?.meta.request_id, announced[1]?.meta.request_id, 'one event, two deliveries');

      // Reloads, and the next day's sync, learn nothing new: nothing more is sent.
      await t.container.ratesUpdates.reload();
      clock.set('2026-11-29T10:00:00Z');
      const again = await t.container.ratesUpdates.runIfDue();
      assert.equal(again?.kind, 'synced', JSON.stringify(again));
      await t.container.ratesUpdates.reload();
      assert.equal((await delivered()).length, 2);

      // 23:59 in Helsinki: still nothing. Midnight there: the change is in force.
      clock.set('2026-12-31T21:59:00Z');
      await t.container.ratesUpdates.reload();
      assert.equal((await delivered()).length, 2);
      clock.set('2026-12-31T22:00:30Z');
      await t.container.ratesUpdates.reload();
      await t.container.ratesUpdates.reload();
      const all = await delivered();
      const inForce = byPath(all.slice(2));
      assert.deepEqual(
        inForce.map((d) => [d.path, d.data.status, d.data.effective_from]),
        [
          ['/both', 'in_force', '2027-01-01'],
          ['/rates', 'in_force', '2027-01-01'],
        ],
      );
      assert.deepEqual(inForce[0]?.data.before, FI_BEFORE);
      assert.deepEqual(inForce[0]?.data.after, FI_AFTER);
      assert.equal(
        inForce[0]?.data.data_version,
        (await t.app.inject({ method: 'GET', url: '/v1/rates/fi' })).json().meta.data_version,
      );
      assert.ok(!all.some((d) => d.path === '/plain'), 'an endpoint without events gets no rates.changed');

      // Days later, nothing more.
      clock.set('2027-01-05T10:00:00Z');
      await t.container.ratesUpdates.reload();
      assert.equal((await delivered()).length, 4);
    });

    it('the day of a change passes while no instance runs: the in force event is sent at the next start', async () => {
      await register(owner, '/rates', ['rates.changed']);
      sim.control({ tedb: { announce: { country: 'FI', from: '2027-01-01', standard: 24 } } });
      assert.deepEqual(await t.container.ratesUpdates.syncNow(), {
        kind: 'synced',
        applied: 1,
        held: 0,
        retired: 0,
      });
      assert.equal((await delivered()).length, 1);
      await t.close();
      clock.set('2027-01-03T08:00:00Z');
      t = await app();
      const got = await delivered();
      assert.deepEqual(
        got.map((d) => [d.data.status, d.data.effective_from]),
        [
          ['announced', '2027-01-01'],
          ['in_force', '2027-01-01'],
        ],
      );
    });

    it('a held change accepted by an operator is announced then; a change learnt on its own day is in force at once', async () => {
      await register(owner, '/rates', ['rates.changed']);
      sim.control({ tedb: { announce: { country: 'DE', from: '2027-01-01', standard: 26 } } });
      const synced = await t.container.ratesUpdates.syncNow();
      assert.equal(synced.kind, 'synced', JSON.stringify(synced));
      assert.deepEqual(await delivered(), [], 'a held change is not announced');
      const [held] = await t.container.ratesUpdates.changes(['held']);
      const ops = await t.container.admin.createKey('ops', 'admin');
      const accepted = await t.app.inject({
        method: 'POST',
        url: `/admin/v1/rates/changes/${held?.id}/accept`,
        headers: { authorization: `Bearer ${ops.key}` },
      });
      assert.equal(accepted.statusCode, 200, accepted.body);
      const announced = await delivered();
      assert.deepEqual(
        announced.map((d) => [
          d.data.country_code,
          d.data.status,
          d.data.before.standard_rate,
          d.data.after.standard_rate,
        ]),
        [['de', 'announced', 19, 26]],
      );

      sim.control({ tedb: { announce: { country: 'AT', from: '2026-11-28', standard: 21 } } });
      clock.set('2026-11-28T10:00:00Z');
      const again = await t.container.ratesUpdates.runIfDue();
      assert.equal(again?.kind, 'synced', JSON.stringify(again));
      const now = (await delivered()).slice(1);
      assert.deepEqual(
        now.map((d) => [
          d.data.country_code,
          d.data.status,
          d.data.effective_from,
          d.data.before.standard_rate,
          d.data.after.standard_rate,
        ]),
        [['at', 'in_force', '2026-11-28', 20, 21]],
      );
    });

    it('two instances on one database: each change is sent once', async () => {
      await register(owner, '/rates', ['rates.changed']);
      await register(other, '/other', ['rates.changed']);
      const second = await app();
      try {
        sim.control({
          tedb: { announce: { country: 'FI', from: '2027-01-01', standard: 24 }, latencyMs: 20 },
        });
        await Promise.all([t.container.ratesUpdates.runIfDue(), second.container.ratesUpdates.runIfDue()]);
        await Promise.all([t.container.ratesUpdates.reload(), second.container.ratesUpdates.reload()]);
        const announced = await delivered(t, second);
        assert.deepEqual(
          byPath(announced).map((d) => [d.path, d.data.status]),
          [
            ['/other', 'announced'],
            ['/rates', 'announced'],
          ],
        );
        clock.set('2027-01-01T00:00:00Z');
        await Promise.all([t.container.ratesUpdates.reload(), second.container.ratesUpdates.reload()]);
        await Promise.all([t.container.ratesUpdates.reload(), second.container.ratesUpdates.reload()]);
        const all = await delivered(t, second);
        assert.deepEqual(
          byPath(all.slice(2)).map((d) => [d.path, d.data.status]),
          [
            ['/other', 'in_force'],
            ['/rates', 'in_force'],
          ],
        );
        const stored = await db.kysely
          .selectFrom('rate_events')
          .select(['country_code', 'kind'])
          .where('country_code', '=', 'fi')
          .execute();
        assert.equal(stored.length, 2);
      } finally {
        await second.close();
      }
    });

    it('refuses an unknown event, an empty list or a list that is not one, and stores nothing', async () => {
      const cases: [unknown, RegExp][] = [
        [['rates.changed', 'rates.exploded'], /"events\.1"/],
        [['test'], /"events\.0"/],
        [[], /"events"/],
        ['rates.changed', /"events"/],
        [[42], /"events\.0"/],
      ];
      for (const [events, field] of cases) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/webhooks',
          headers: owner.headers,
          payload: { url: `${receiver.origin}/x`, events },
        });
        assert.equal(res.statusCode, 400, JSON.stringify(events));
        const { error } = res.json() as { error: { code: string; message: string } };
        assert.equal(error.code, 'invalid_format');
        assert.match(error.message, field);
      }
      const unknown = await t.app.inject({
        method: 'POST',
        url: '/v1/webhooks',
        headers: owner.headers,
        payload: { url: `${receiver.origin}/x`, events: ['rates.exploded'] },
      });
      assert.match(unknown.json().error.message, /must be one of .*"rates\.changed"/);
      const list = await t.app.inject({ method: 'GET', url: '/v1/webhooks', headers: owner.headers });
      assert.deepEqual(list.json().data, []);
      assert.equal((await db.kysely.selectFrom('webhook_endpoints').selectAll().execute()).length, 0);
    });

    it('PATCH changes the subscription (null: back to the default events), and refuses a bad one unchanged', async () => {
      const { id } = await register(owner, '/p');
      const patch = (payload: unknown) =>
        t.app.inject({
          method: 'PATCH',
          url: `/v1/webhooks/${id}`,
          headers: owner.headers,
          payload: payload as object,
        });
      const subscribed = await patch({ events: ['rates.changed'] });
      assert.equal(subscribed.statusCode, 200, subscribed.body);
      assert.deepEqual(subscribed.json().data.events, ['rates.changed']);
      const bad = await patch({ events: ['rates.changed', 'nope'] });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().error.code, 'invalid_format');
      assert.match(bad.json().error.message, /"events\.1"/);
      const empty = await patch({});
      assert.equal(empty.statusCode, 400);
      assert.match(empty.json().error.message, /"disabled", "events"/);
      const list = await t.app.inject({ method: 'GET', url: '/v1/webhooks', headers: owner.headers });
      assert.deepEqual(list.json().data[0].events, ['rates.changed'], 'unchanged by the refused requests');

      sim.control({ tedb: { announce: { country: 'FI', from: '2027-01-01', standard: 24 } } });
      assert.equal((await t.container.ratesUpdates.syncNow()).kind, 'synced');
      assert.equal((await delivered()).length, 1);

      const reset = await patch({ events: null, disabled: false });
      assert.equal(reset.statusCode, 200);
      assert.equal(reset.json().data.events, null);
      clock.set('2027-01-01T00:00:00Z');
      await t.container.ratesUpdates.reload();
      assert.equal((await delivered()).length, 1, 'back on the default events: no rates.changed');
    });
  });
}
