import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createManualClock } from '../../src/lib/clock.js';
import { createTedbClient, type TedbClient } from '../../src/registries/tedb.js';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

/** A TEDB client that counts its calls. */
function counting(client: TedbClient): TedbClient & { calls: number } {
  const counted = {
    calls: 0,
    retrieveVatRates(query: Parameters<TedbClient['retrieveVatRates']>[0]) {
      counted.calls += 1;
      return client.retrieveVatRates(query);
    },
  };
  return counted;
}

for (const target of await databaseTargets()) {
  describe(`rates sync on ${target.name}`, { skip: target.skip }, () => {
    let sim: SimulatorServer;
    let tedbUrl: string;
    let db: TestDb;
    let t: TestApp;
    const clock = createManualClock('2026-11-27T10:00:00Z');
    let tedb: ReturnType<typeof counting>;

    before(async () => {
      sim = createSimulatorServer({});
      tedbUrl = (await sim.listen(0, '127.0.0.1')).urls.OPENVAT_TEDB_URL as string;
    });
    after(async () => {
      await sim.close();
    });
    beforeEach(async () => {
      clock.set('2026-11-27T10:00:00Z');
      sim.control({ tedb: { reset: true, hang: false, latencyMs: 0 } });
      db = await target.open();
      tedb = counting(createTedbClient({ url: tedbUrl, timeoutMs: 1_000 }));
      t = await buildTestApp(
        { OPENVAT_TEDB_URL: tedbUrl, OPENVAT_METRICS_TOKEN: 'rates-metrics-token-for-the-sync-tests' },
        { clock, db: { ...db, close: async () => {} }, tedb },
      );
    });
    afterEach(async () => {
      await t.close();
      await db.dispose();
    });

    const get = (url: string, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'GET', url, headers });
    const status = async () => (await get('/v1/status')).json().data.rates;

    it('learns an announced change and serves it from the start of that day in Helsinki, on its own', async () => {
      const before = await get('/v1/rates/fi');
      assert.equal(before.json().data.standard_rate, 25.5);
      assert.equal((await status()).last_success_at, null);

      sim.control({ tedb: { announce: { country: 'FI', from: '2027-01-01', standard: 24 } } });
      const outcome = await t.container.ratesUpdates.runIfDue();
      assert.deepEqual(outcome, { kind: 'synced', applied: 1, held: 0, retired: 0 });
      // Not due again until tomorrow.
      assert.equal(await t.container.ratesUpdates.runIfDue(), null);
      assert.deepEqual(
        { ...(await status()), next_run_at: null },
        {
          enabled: true,
          last_run_at: '2026-11-27T10:00:00.000Z',
          last_success_at: '2026-11-27T10:00:00.000Z',
          last_error: null,
          next_run_at: null,
          held: 0,
        },
      );

      const learnt = await get('/v1/rates/fi');
      assert.equal(learnt.json().data.standard_rate, 25.5, 'still the rate in force today');
      const future = await get('/v1/rates/fi?date=2027-01-01');
      assert.equal(future.json().data.standard_rate, 24);
      assert.deepEqual(future.json().data.reduced_rates, [10, 13.5]);
      assert.equal((await get('/v1/rates/fi?date=2026-12-31')).json().data.standard_rate, 25.5);

      // 23:59 in Helsinki (UTC+2 in winter), then midnight.
      clock.set('2026-12-31T21:59:00Z');
      const last = await get('/v1/rates/fi');
      assert.equal(last.json().data.standard_rate, 25.5);
      clock.set('2026-12-31T22:00:00Z');
      const first = await get('/v1/rates/fi');
      assert.equal(first.json().data.standard_rate, 24);
      assert.equal(first.json().data.updated_at, '2027-01-01');
      assert.equal(first.json().meta.data_version, '2027-01-01');
      assert.notEqual(first.headers.etag, last.headers.etag);
      assert.notEqual(first.json().meta.data_version, last.json().meta.data_version);
      // Germany's day has not started yet: its answer is the same as before.
      assert.equal((await get('/v1/rates/de')).json().data.standard_rate, 19);
      // A client holding the old entity tag gets the new answer.
      const revalidated = await get('/v1/rates/fi', { 'if-none-match': String(last.headers.etag) });
      assert.equal(revalidated.statusCode, 200);
    });

    it("validate reports the rate in force in the number's country today: from midnight there, and at once after a sync", async () => {
      const key = await t.key('pro', 'test');
      const rateOf = async () => {
        const res = await t.app.inject({
          method: 'GET',
          url: '/v1/validate?vat_number=DE100000008',
          headers: key.headers,
        });
        assert.equal(res.statusCode, 200, res.body);
        return res.json().data.country.vat.standard_rate;
      };
      clock.set('2026-12-31T22:00:00Z');
      assert.equal(await rateOf(), 19);
      // Learnt (and served) after the answer above was built: no waiting for the next day.
      sim.control({ tedb: { announce: { country: 'DE', from: '2026-12-31', standard: 20 } } });
      assert.equal((await t.container.ratesUpdates.syncNow()).kind, 'synced');
      assert.equal(await rateOf(), 20);
      sim.control({ tedb: { announce: { country: 'DE', from: '2027-01-01', standard: 21 } } });
      assert.equal((await t.container.ratesUpdates.syncNow()).kind, 'synced');
      clock.set('2026-12-31T22:59:00Z');
      assert.equal(await rateOf(), 20);
      // Midnight in Berlin, still 31 December in UTC.
      clock.set('2026-12-31T23:00:00Z');
      assert.equal(await rateOf(), 21);
    });

    it('holds a standard rate moving by more than 5 points and rates with a reduced rate above the standard one: not served until accepted; a rejected one never', async () => {
      sim.control({ tedb: { announce: { country: 'DE', from: '2027-01-01', standard: 26 } } });
      sim.control({ tedb: { announce: { country: 'AT', from: '2027-01-01', standard: 12 } } });
      const outcome = await t.container.ratesUpdates.syncNow();
      assert.deepEqual(outcome, { kind: 'synced', applied: 0, held: 2, retired: 0 });
      assert.equal((await status()).held, 2);
      const metrics = await get('/metrics', {
        authorization: 'Bearer rates-metrics-token-for-the-sync-tests',
      });
      assert.match(metrics.body, /^openvat_rates_held_changes 2$/m);
      assert.match(
        metrics.body,
        new RegExp(
          `^openvat_rates_last_sync_success_timestamp_seconds ${Date.parse('2026-11-27T10:00:00Z') / 1000}$`,
          'm',
        ),
      );
      const held = await t.container.ratesUpdates.changes(['held']);
      assert.deepEqual(
        held.map((c) => [c.country_code, c.valid_from, c.rates?.standard_rate]),
        [
          ['at', '2027-01-01', undefined],
          ['de', '2027-01-01', 26],
        ],
      );
      assert.match(held[0]?.reason ?? '', /a reduced rate of 13% is not below the standard rate of 12%/);
      assert.match(held[1]?.reason ?? '', /more than 5 points \(19% → 26%\)/);
      assert.equal((await get('/v1/rates/de?date=2027-01-01')).json().data.standard_rate, 19);

      const [at, de] = held;
      const ops = await t.container.admin.createKey('ops', 'admin');
      const decide = async (id: string, decision: 'accept' | 'reject') =>
        (
          await t.app.inject({
            method: 'POST',
            url: `/admin/v1/rates/changes/${id}/${decision}`,
            headers: { authorization: `Bearer ${ops.key}` },
          })
        ).statusCode;
      assert.equal(await decide(de?.id as string, 'accept'), 200);
      assert.equal(await decide(at?.id as string, 'reject'), 200);
      assert.equal(await decide(at?.id as string, 'accept'), 400, 'not held any more');
      assert.equal(await decide('0193a5b0-0000-7000-8000-000000000000', 'accept'), 404);
      assert.equal((await get('/v1/rates/de?date=2027-01-01')).json().data.standard_rate, 26);
      assert.equal((await get('/v1/rates/at?date=2027-01-01')).json().data.standard_rate, 20);
      assert.equal((await status()).held, 0);

      // The next sync neither holds the rejected change again nor learns the accepted one twice.
      clock.set('2026-11-28T10:00:00Z');
      assert.deepEqual(await t.container.ratesUpdates.runIfDue(), {
        kind: 'synced',
        applied: 0,
        held: 0,
        retired: 0,
      });
      assert.equal((await status()).held, 0);
    });

    it('a withdrawn announcement stops being served', async () => {
      sim.control({ tedb: { announce: { country: 'FI', from: '2027-01-01', standard: 24 } } });
      await t.container.ratesUpdates.syncNow();
      assert.equal((await get('/v1/rates/fi?date=2027-01-01')).json().data.standard_rate, 24);
      sim.control({ tedb: { reset: true } });
      clock.set('2026-11-28T10:00:00Z');
      assert.deepEqual(await t.container.ratesUpdates.runIfDue(), {
        kind: 'synced',
        applied: 0,
        held: 0,
        retired: 1,
      });
      assert.equal((await get('/v1/rates/fi?date=2027-01-01')).json().data.standard_rate, 25.5);
    });

    for (const [name, control, why] of [
      ['an answer that is not XML', { tedb: { fault: 'not_xml' } }, /HTML page|not XML/],
      ['a SOAP fault', { tedb: { fault: 'soap' } }, /SOAP fault/],
      ['a partial answer', { tedb: { fault: 'partial' } }, /answered for 24 of 27 member states/],
      ['no answer in time', { tedb: { hang: true } }, /TEDB: no answer within 1000 ms/],
    ] as const) {
      it(`${name}: the sync changes nothing, says why, and tries again an hour later`, async () => {
        sim.control({ tedb: { announce: { country: 'FI', from: '2027-01-01', standard: 24 } } });
        sim.control(control);
        const outcome = await t.container.ratesUpdates.runIfDue();
        assert.equal(outcome?.kind, 'failed');
        assert.match(outcome?.kind === 'failed' ? outcome.message : '', why);
        const reported = await status();
        assert.match(reported.last_error ?? '', why);
        assert.equal(reported.last_success_at, null);
        assert.equal(reported.next_run_at, '2026-11-27T11:00:00.000Z');
        assert.deepEqual(await t.container.ratesUpdates.changes(['applied', 'held']), []);
        assert.equal((await get('/v1/rates/fi?date=2027-01-01')).json().data.standard_rate, 25.5);

        sim.control({ tedb: { fault: null, hang: false } });
        clock.set('2026-11-27T10:59:00Z');
        assert.equal(await t.container.ratesUpdates.runIfDue(), null);
        clock.set('2026-11-27T11:00:00Z');
        assert.equal((await t.container.ratesUpdates.runIfDue())?.kind, 'synced');
        const after = await status();
        assert.equal(after.last_error, null);
        assert.equal(after.last_success_at, '2026-11-27T11:00:00.000Z');
        assert.equal((await get('/v1/rates/fi?date=2027-01-01')).json().data.standard_rate, 24);
      });
    }

    it('two instances on one database: one runs the sync, both serve what it learnt after a reload', async () => {
      const other = counting(createTedbClient({ url: tedbUrl, timeoutMs: 1_000 }));
      const second = await buildTestApp(
        { OPENVAT_TEDB_URL: tedbUrl },
        { clock, db: { ...db, close: async () => {} }, tedb: other },
      );
      try {
        sim.control({
          tedb: { announce: { country: 'FI', from: '2027-01-01', standard: 24 }, latencyMs: 50 },
        });
        const outcomes = await Promise.all([
          t.container.ratesUpdates.runIfDue(),
          second.container.ratesUpdates.runIfDue(),
        ]);
        assert.equal(outcomes.filter((o) => o !== null).length, 1, JSON.stringify(outcomes));
        assert.equal([tedb.calls, other.calls].filter((n) => n > 0).length, 1);
        await t.container.ratesUpdates.reload();
        await second.container.ratesUpdates.reload();
        for (const app of [t.app, second.app]) {
          const res = await app.inject({ method: 'GET', url: '/v1/rates/fi?date=2027-01-01' });
          assert.equal(res.json().data.standard_rate, 24);
        }
      } finally {
        await second.close();
      }
    });
  });
}

describe('OPENVAT_TEDB_URL', () => {
  const load = (value?: string) =>
    loadConfig({
      DATABASE_URL: 'sqlite::memory:',
      ...(value === undefined ? {} : { OPENVAT_TEDB_URL: value }),
    });

  it("is the Commission's service by default, any http(s) address, or off", () => {
    assert.equal(load().tedbUrl, 'https://ec.europa.eu/taxation_customs/tedb/ws/');
    assert.equal(load('http://127.0.0.1:9099/tedb/ws/').tedbUrl, 'http://127.0.0.1:9099/tedb/ws/');
    assert.equal(load('off').tedbUrl, null);
  });

  it('anything else stops the start with a message naming it', () => {
    for (const value of ['ftp://example.org/', 'tedb', 'false']) {
      assert.throws(
        () => load(value),
        (error: Error) =>
          error instanceof ConfigError &&
          error.message === `OPENVAT_TEDB_URL must be an http(s) URL or off, got "${value}"`,
      );
    }
  });

  it('off: the sync is reported disabled and never runs', async () => {
    const t = await buildTestApp({ OPENVAT_TEDB_URL: 'off' });
    try {
      assert.equal(await t.container.ratesUpdates.runIfDue(), null);
      const res = await t.app.inject({ method: 'GET', url: '/v1/status' });
      assert.equal(res.json().data.rates.enabled, false);
    } finally {
      await t.close();
    }
  });
});
