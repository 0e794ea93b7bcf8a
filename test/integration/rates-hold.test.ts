import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { createTedbClient } from '../../src/registries/tedb.js';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

// A feed that lies: what the sync holds for an operator instead of serving, measured against the rates
// shipped (the curated dataset) or released by an operator, never against what an earlier sync applied.
for (const target of await databaseTargets()) {
  describe(`rates sync holds a poisoned feed on ${target.name}`, { skip: target.skip }, () => {
    let sim: SimulatorServer;
    let tedbUrl: string;
    let db: TestDb;
    let t: TestApp;
    const clock = createManualClock('2026-11-27T10:00:00Z');

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
      t = await buildTestApp(
        { OPENVAT_TEDB_URL: tedbUrl },
        {
          clock,
          db: { ...db, close: async () => {} },
          tedb: createTedbClient({ url: tedbUrl, timeoutMs: 5_000 }),
        },
      );
    });
    afterEach(async () => {
      await t.close();
      await db.dispose();
    });

    const announce = (announcement: Record<string, unknown>) =>
      sim.control({ tedb: { announce: announcement } });
    const sync = async () => {
      const outcome = await t.container.ratesUpdates.syncNow();
      assert.equal(outcome.kind, 'synced', JSON.stringify(outcome));
      return outcome;
    };
    const rates = async (country: string, date: string) => {
      const res = await t.app.inject({ method: 'GET', url: `/v1/rates/${country}?date=${date}` });
      assert.equal(res.statusCode, 200, res.body);
      const { standard_rate, reduced_rates, super_reduced_rate, parking_rate } = res.json().data;
      return { standard_rate, reduced_rates, super_reduced_rate, parking_rate };
    };
    const standard = async (country: string, date: string) => (await rates(country, date)).standard_rate;
    const held = async () =>
      (await t.container.ratesUpdates.changes(['held'])).map((c) => ({
        country: c.country_code,
        from: c.valid_from,
        rates: c.rates,
        reason: c.reason ?? '',
      }));

    it('19 → 24 → 29 → 34 over three syncs: the step that leaves the bound of the shipped 19% is held, and 2027 is served as shipped', async () => {
      announce({ country: 'DE', from: '2027-01-01', standard: 24 });
      assert.deepEqual(await sync(), { kind: 'synced', applied: 1, held: 0, retired: 0 });
      assert.equal(await standard('de', '2027-01-01'), 24, 'within 5 points of the shipped 19%');

      for (const [day, poisoned] of [
        ['2026-11-28', 29],
        ['2026-11-29', 34],
      ] as const) {
        clock.set(`${day}T10:00:00Z`);
        announce({ country: 'DE', from: '2027-01-01', standard: poisoned });
        assert.deepEqual(await sync(), { kind: 'synced', applied: 0, held: 1, retired: 1 });
        assert.equal(
          await standard('de', '2027-01-01'),
          19,
          `${poisoned}% is not served, nor the 24% it replaces`,
        );
      }
      const [change, ...others] = await held();
      assert.equal(others.length, 0);
      assert.equal(change?.rates?.standard_rate, 34);
      assert.match(change?.reason ?? '', /the standard rate would move by more than 5 points \(19% → 34%\)/);
      assert.match(change?.reason ?? '', /against the rates last shipped or released/);
    });

    it('19 → 24 → 29 in the situation of the day, then the honest feed: not held, the shipped 19% is served again from that day and the days past stay as they were', async () => {
      announce({ country: 'DE', from: '2026-11-27', standard: 24 });
      assert.deepEqual(await sync(), { kind: 'synced', applied: 1, held: 0, retired: 0 });
      clock.set('2026-11-28T10:00:00Z');
      announce({ country: 'DE', from: '2026-11-28', standard: 29 });
      assert.deepEqual(await sync(), { kind: 'synced', applied: 0, held: 1, retired: 0 });
      assert.equal(await standard('de', '2026-11-28'), 24);

      clock.set('2026-11-29T10:00:00Z');
      sim.control({ tedb: { reset: true } });
      // The honest rates are the shipped ones: applied from the sync's day; the held 29% is withdrawn.
      assert.deepEqual(await sync(), { kind: 'synced', applied: 1, held: 0, retired: 1 });
      assert.deepEqual(await held(), []);
      assert.equal(await standard('de', '2026-11-29'), 19);
      assert.equal(
        (await t.app.inject({ method: 'GET', url: '/v1/rates/de' })).json().data.standard_rate,
        19,
      );
      // What was served on the days past is what their answers and decisions keep.
      assert.equal(await standard('de', '2026-11-27'), 24);
      assert.equal(await standard('de', '2026-11-28'), 24);
      assert.equal(await standard('de', '2026-11-26'), 19);
      clock.set('2026-11-30T10:00:00Z');
      assert.deepEqual(await sync(), { kind: 'synced', applied: 0, held: 0, retired: 0 });
    });

    it('a change TEDB dates from the start of its situation (2021-01-01) is held: ?date= answers and decisions for past sales stay as they were', async () => {
      const key = await t.key('pro', 'test');
      const decision = async (supplyDate: string) => {
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/decide',
          headers: key.headers,
          payload: { seller_vat: 'DE100000008', buyer_country: 'DE', supply_date: supplyDate },
        });
        assert.equal(res.statusCode, 200, res.body);
        return res.json().data.rate;
      };
      assert.equal(await decision('2024-06-01'), 19);
      announce({ country: 'DE', from: '2021-01-01', standard: 22 });
      assert.deepEqual(await sync(), { kind: 'synced', applied: 0, held: 1, retired: 0 });
      const [change] = await held();
      assert.equal(change?.from, '2021-01-01');
      assert.match(
        change?.reason ?? '',
        /it would change DE's rates from 2021-01-01, before the sync's day \(2026-11-27\)/,
      );
      for (const day of ['2021-01-01', '2024-06-01', '2026-11-26', '2026-11-27', '2027-06-01'])
        assert.equal(await standard('de', day), 19, day);
      assert.equal(await decision('2024-06-01'), 19);
      // The next sync finds the same and holds nothing new.
      clock.set('2026-11-28T10:00:00Z');
      assert.deepEqual(await sync(), { kind: 'synced', applied: 0, held: 0, retired: 0 });
      assert.equal((await held()).length, 1);
    });

    it('every rate is bounded against the shipped rates, reduced, super-reduced and parking alike, and a band may not appear or vanish', async () => {
      announce({ country: 'DE', from: '2027-01-01', reduced: [18.9] });
      announce({ country: 'DE', from: '2027-02-01', reduced: [0.0001] });
      announce({ country: 'FR', from: '2027-01-01', super_reduced: 0.0001 });
      announce({ country: 'IE', from: '2027-01-01', parking: 19.5 });
      announce({ country: 'FI', from: '2027-01-01', reduced: [10, 13.5, 14] });
      // Within the bound: applied.
      announce({ country: 'SE', from: '2027-01-01', reduced: [6, 13] });
      assert.deepEqual(await sync(), { kind: 'synced', applied: 1, held: 5, retired: 0 });
      const reasons = new Map((await held()).map((c) => [`${c.country} ${c.from}`, c.reason]));
      assert.match(
        reasons.get('de 2027-01-01') ?? '',
        /a reduced rate would move by more than 5 points \(7% → 18\.9%\)/,
      );
      assert.match(
        reasons.get('de 2027-02-01') ?? '',
        /for DE, a rate band would appear or vanish \(reduced 7% → none, super-reduced none → 0\.0001%\)/,
      );
      assert.match(
        reasons.get('fr 2027-01-01') ?? '',
        /the super-reduced rate would move by more than 50% of the rate \(2\.1% → 0\.0001%\)/,
      );
      assert.match(
        reasons.get('ie 2027-01-01') ?? '',
        /the parking rate would move by more than 5 points \(13\.5% → 19\.5%\)/,
      );
      assert.match(reasons.get('fi 2027-01-01') ?? '', /reduced 10%\/13\.5% → 10%\/13\.5%\/14%/);
      assert.deepEqual((await rates('de', '2027-01-01')).reduced_rates, [7]);
      assert.deepEqual(await rates('de', '2027-02-01'), {
        standard_rate: 19,
        reduced_rates: [7],
        super_reduced_rate: null,
        parking_rate: null,
      });
      assert.equal((await rates('fr', '2027-01-01')).super_reduced_rate, 2.1);
      assert.equal((await rates('ie', '2027-01-01')).parking_rate, 13.5);
      assert.deepEqual((await rates('fi', '2027-01-01')).reduced_rates, [10, 13.5]);
      assert.deepEqual((await rates('se', '2027-01-01')).reduced_rates, [6, 13]);
    });

    it("an operator's release stays: no later sync supersedes or withdraws it or its decided_by, and later changes are measured against it", async () => {
      announce({ country: 'DE', from: '2027-01-01', standard: 26 });
      assert.deepEqual(await sync(), { kind: 'synced', applied: 0, held: 1, retired: 0 });
      const [change] = await t.container.ratesUpdates.changes(['held']);
      const ops = await t.container.admin.createKey('ops', 'admin');
      const released = await t.app.inject({
        method: 'POST',
        url: `/admin/v1/rates/changes/${change?.id}/accept`,
        headers: { authorization: `Bearer ${ops.key}` },
      });
      assert.equal(released.statusCode, 200, released.body);
      const by = `admin key ops (${ops.summary.id})`;
      assert.equal(released.json().data.decided_by, by);
      assert.equal(await standard('de', '2027-01-01'), 26);

      // TEDB no longer reports it: the release stays; going back to 19% is 7 points from it, held.
      clock.set('2026-11-28T10:00:00Z');
      sim.control({ tedb: { reset: true } });
      assert.deepEqual(await sync(), { kind: 'synced', applied: 0, held: 1, retired: 0 });
      const release = (await t.container.ratesUpdates.changes(['applied'])).find((c) => c.id === change?.id);
      assert.equal(release?.decided_by, by);
      assert.equal(release?.rates?.standard_rate, 26);
      assert.equal(await standard('de', '2027-01-01'), 26);
      assert.match((await held())[0]?.reason ?? '', /more than 5 points \(26% → 19%\)/);

      // 27% is within the bound of the released 26% (not of the shipped 19%): applied over it.
      clock.set('2026-11-29T10:00:00Z');
      announce({ country: 'DE', from: '2027-01-01', standard: 27 });
      assert.deepEqual(await sync(), { kind: 'synced', applied: 1, held: 0, retired: 1 });
      assert.equal(await standard('de', '2027-01-01'), 27);
      clock.set('2026-11-30T10:00:00Z');
      sim.control({ tedb: { reset: true } });
      await sync();
      const kept = (await t.container.ratesUpdates.changes(['applied'])).find((c) => c.id === change?.id);
      assert.equal(kept?.decided_by, by);
      assert.equal(kept?.status, 'applied');
    });
  });
}
