import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { createManualClock } from '../../src/lib/clock.js';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { type FixtureServer, startFixtureServer } from './registries/helpers.js';

const NOW = '2026-12-02T09:00:00.000Z';

for (const target of await databaseTargets()) {
  describe(`EORI numbers through the HTTP stack against the simulators, on ${target.name}`, {
    skip: target.skip,
  }, () => {
    let sim: SimulatorServer;
    let urls: { EOS_URL: string; HMRC_URL: string };
    let hmrc400: FixtureServer;
    let db: TestDb;
    let t: TestApp;
    let live: TestKey;
    const clock = createManualClock(NOW);

    before(async () => {
      sim = createSimulatorServer({ now: () => clock.now() });
      urls = (await sim.listen(0)).urls;
      hmrc400 = await startFixtureServer(() => ({
        status: 400,
        body: '{"code":"INVALID_REQUEST","message":"Invalid payload"}',
        headers: { 'content-type': 'application/json' },
      }));
    });
    after(async () => {
      await sim.close();
      await hmrc400.close();
    });
    async function start(env: Record<string, string> = {}) {
      db = await target.open();
      const shared: Db = { ...db, close: async () => {} };
      t = await buildTestApp(
        {
          EOS_URL: urls.EOS_URL,
          HMRC_URL: urls.HMRC_URL,
          OPENVAT_STATUS_POLL_MS: '0',
          OPENVAT_REGISTRY_BACKOFF_MS: '1',
          OPENVAT_REGISTRY_DEADLINE_MS: '20',
          OPENVAT_REGISTRY_TIMEOUT_MS: '300',
          ...env,
        },
        { db: shared, clock },
      );
      live = await t.key('free', 'live');
    }
    beforeEach(() => {
      clock.set(NOW);
      sim.control({ all: { reset: true } });
    });
    afterEach(async () => {
      await t.close();
      await db.dispose();
    });

    const get = (number: string, query = '') =>
      t.app.inject({
        method: 'GET',
        url: `/v1/eori/${encodeURIComponent(number)}${query}`,
        headers: live.headers,
      });
    const stored = (eori: string) =>
      db.kysely.selectFrom('eori_answers').selectAll().where('eori', '=', eori).execute();

    it('a batch mixing EU, XI and GB numbers and one malformed number: each answered, the malformed one fails alone', async () => {
      await start();
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/eori/batch',
        headers: live.headers,
        payload: {
          eori_numbers: [
            'de100',
            'FR200',
            'XI123456789000',
            'GB 1234 5678 9002',
            'GB987654321009',
            'GB12345',
          ],
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      const { data, meta } = res.json();
      assert.deepEqual(data.summary, { total: 6, valid: 3, invalid: 2, failed: 1 });
      const [de, fr, xi, gb, gbInvalid, bad] = data.results;
      assert.equal(de.data.eori, 'DE100');
      assert.equal(de.data.valid, true);
      assert.equal(de.meta.source, 'eos');
      assert.ok(de.data.company?.name, 'the published trader');
      assert.equal(fr.data.valid, false);
      assert.equal(fr.data.company, null);
      assert.equal(xi.meta.source, 'eos');
      assert.equal(gb.data.eori, 'GB123456789002');
      assert.equal(gb.meta.source, 'hmrc');
      assert.equal(gb.data.valid, true);
      assert.equal(gbInvalid.data.valid, false);
      assert.equal(bad.ok, false);
      assert.equal(bad.error.code, 'invalid_format');
      assert.equal(bad.error.reason, 'length');
      assert.equal(meta.source_status, 'live');
      const received = sim.stats() as {
        hmrcEori: { eorisReceived: string[] };
        eos: { eorisReceived: string[] };
      };
      assert.ok(!received.hmrcEori.eorisReceived.includes('GB12345'), 'the malformed number is never sent');
      assert.ok(!received.hmrcEori.eorisReceived.some((e) => e.startsWith('XI')), 'XI goes to EOS');
      assert.equal((await stored('GB987654321009'))[0]?.valid, 0);
      const audit = await t.app.inject({
        method: 'GET',
        url: `/v1/audits/${meta.request_id}`,
        headers: live.headers,
      });
      assert.ok(audit.statusCode === 200 || audit.statusCode === 404, audit.body);
    });

    it('one number: live, then cached, then cache=false asks again; a malformed one is 400 with its reason', async () => {
      await start();
      const first = await get('DE100');
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(first.json().meta.source_status, 'live');
      assert.equal(first.json().data.country_code, 'DE');
      const second = await get('DE100');
      assert.equal(second.json().meta.source_status, 'cached');
      assert.equal(second.json().meta.cached, true);
      const forced = await get('DE100', '?cache=false');
      assert.equal(forced.json().meta.source_status, 'live');
      const bad = await get('CH123');
      assert.equal(bad.statusCode, 400, bad.body);
      assert.equal(bad.json().error.code, 'invalid_format');
      assert.equal(bad.json().error.details.reason, 'country');
      const status = await t.app.inject({ method: 'GET', url: '/v1/status' });
      assert.ok(
        status.json().data.registries.some((row: { registry: string }) => row.registry === 'eos'),
        status.body,
      );
    });

    it('beyond the monthly quota, a number the store answers is still served; a call is not', async () => {
      await start({ OPENVAT_MONTHLY_QUOTA_FREE: '1' });
      const first = await get('DE100');
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(first.json().meta.source_status, 'live');
      const beyond = await get('DE101');
      assert.equal(beyond.statusCode, 429, beyond.body);
      assert.equal(beyond.json().error.code, 'rate_limited');
      assert.equal((await stored('DE101')).length, 0, 'a call beyond the quota asks no service');
      const fromStore = await get('DE100');
      assert.equal(fromStore.statusCode, 200, fromStore.body);
      assert.equal(fromStore.json().meta.source_status, 'cached');
      assert.equal((await get('DE100', '?cache=false')).statusCode, 429, 'a forced call is one');
    });

    const eosFailures: Array<[string, string, () => void]> = [
      ['a SOAP fault', 'DE300', () => {}],
      ['an errorDescription', 'DE302', () => {}],
      ['an HTML page', 'DE303', () => {}],
      ['a timeout', 'DE304', () => {}],
      ['an errorReason for the number', 'DE301', () => {}],
      [
        'throttling',
        'DE123456',
        () => sim.control({ eos: { errorRate: { EOS: { rate: 1, code: 'THROTTLED' } } } }),
      ],
    ];
    for (const [what, number, setup] of eosFailures) {
      it(`EOS answering ${what} is 502 registry_unavailable, never valid:false, nothing stored`, async () => {
        await start();
        setup();
        const res = await get(number);
        assert.equal(res.statusCode, 502, res.body);
        assert.equal(res.json().error.code, 'registry_unavailable');
        assert.equal(res.json().error.details.source, 'eos');
        assert.ok(res.headers['retry-after']);
        assert.deepEqual(await stored(number), []);
      });
    }

    const hmrcFailures: Array<[string, string, () => void]> = [
      ['a 500', 'GB123456789007', () => {}],
      ['a 502', 'GB123456789009', () => {}],
      ['an HTML page', 'GB123456789002', () => sim.control({ hmrcEori: { serviceDown: true } })],
      [
        'throttling',
        'GB123456789002',
        () => sim.control({ hmrcEori: { errorRate: { GB: { rate: 1, code: 'MESSAGE_THROTTLED_OUT' } } } }),
      ],
      ['a timeout', 'GB123456789002', () => sim.control({ hmrcEori: { hang: true } })],
    ];
    for (const [what, number, setup] of hmrcFailures) {
      it(`HMRC answering ${what} is 502 registry_unavailable, never valid:false`, async () => {
        await start();
        setup();
        const res = await get(number);
        assert.equal(res.statusCode, 502, res.body);
        assert.equal(res.json().error.details.source, 'hmrc');
        assert.deepEqual(await stored(number), []);
      });
    }

    it('HMRC refusing the whole request with 400 fails its numbers as unavailable, the EOS ones still answer', async () => {
      await start({ HMRC_URL: hmrc400.url });
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/eori/batch',
        headers: live.headers,
        payload: { eori_numbers: ['GB123456789002', 'DE100'] },
      });
      assert.equal(res.statusCode, 200, res.body);
      const [gb, de] = res.json().data.results;
      assert.equal(gb.ok, false);
      assert.equal(gb.error.code, 'registry_unavailable');
      assert.equal(de.data.valid, true);
    });

    it('answers of another shape (an EOS status neither 0 nor 1, HMRC 200 without a list) are 502, never not valid', async () => {
      // The recorded EOS envelope (see src/simulators/eos.ts) with a status the service does not define.
      const eos = await startFixtureServer(() => ({
        status: 200,
        body:
          '<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body>' +
          '<ns0:validateEORIResponse xmlns:ns0="http://eori.ws.eos.dds.s/"><return>' +
          '<requestDate>02/12/2026</requestDate><result><eori>DE100</eori><status>7</status>' +
          '<statusDescr>Pending</statusDescr></result></return></ns0:validateEORIResponse></S:Body></S:Envelope>',
        headers: { 'content-type': 'text/xml;charset=utf-8' },
      }));
      const hmrc = await startFixtureServer(() => ({
        status: 200,
        body: '{"message":"ok"}',
        headers: { 'content-type': 'application/json' },
      }));
      try {
        await start({ EOS_URL: eos.url, HMRC_URL: hmrc.url });
        for (const number of ['DE100', 'GB123456789000']) {
          const res = await get(number, '?cache=false');
          assert.equal(res.statusCode, 502, res.body);
          assert.equal(res.json().error.code, 'registry_unavailable');
          assert.equal((await stored(number)).length, 0, 'nothing stored');
        }
        assert.ok(eos.requests.length > 0 && hmrc.requests.length > 0, 'both services were asked');
      } finally {
        await eos.close();
        await hmrc.close();
      }
    });

    it('a stored answer is served degraded while the service fails, after its TTL', async () => {
      await start();
      assert.equal((await get('DE100')).statusCode, 200);
      clock.advance(31 * 86_400_000);
      sim.control({ eos: { errorRate: { EOS: { rate: 1, code: 'SOAP_FAULT' } } } });
      const res = await get('DE100');
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().meta.source_status, 'degraded');
      assert.equal(res.json().data.valid, true);
    });

    it('test keys answer from the table without a call', async () => {
      await start();
      const test = await t.key('free', 'test');
      const before = JSON.stringify(sim.stats());
      const answer = async (n: string) =>
        t.app.inject({ method: 'GET', url: `/v1/eori/${n}`, headers: test.headers });
      assert.equal((await answer('DE300000000000003')).json().data.valid, false);
      assert.equal((await answer('DE400000000000004')).statusCode, 502);
      assert.equal((await answer('DE500000000000005')).json().meta.source_status, 'degraded');
      assert.equal((await answer('GB100000000001')).json().meta.source, 'hmrc');
      assert.equal(JSON.stringify(sim.stats()), before);
    });
  });
}
