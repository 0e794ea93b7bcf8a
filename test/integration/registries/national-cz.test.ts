import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { CZ_ADIS_SOAP_ACTION, createCzAdisClient } from '../../../src/registries/cz-adis.js';
import { createCzAdisSimulator, czOutcome } from '../../../src/simulators/cz-adis.js';
import { nationalCompany } from '../../../src/simulators/national.js';
import type { SimulatorServer } from '../../../src/simulators/server.js';
import { closedPortUrl, type FixtureServer, fixture, startFixtureServer } from './helpers.js';
import { asAnswer, asUnavailable, OVERSIZED, startNational } from './national-helpers.js';

const NOW = new Date('2026-09-24T10:00:00Z');
const now = () => NOW;
const vat = (national: string) => ({ vat: { country: 'CZ', national } });
const ENDPOINT = '/dpr/axis2/services/rozhraniCRPDPH.rozhraniCRPDPHSOAP';
const xml = (status: number, body: string) => ({
  status,
  body,
  headers: { 'content-type': 'text/xml; charset=utf-8' },
});

/** The first 8-digit DIČ (valid IČO check) from `start` that the simulator answers `outcome` for. */
function findDic(outcome: string, start = 22_000_000): string {
  const weights = [8, 7, 6, 5, 4, 3, 2];
  for (let n = start; ; n++) {
    const dic = String(n);
    const r = weights.reduce((sum, w, i) => sum + w * Number(dic[i]), 0) % 11;
    const check = r === 0 ? 1 : r === 1 ? 0 : 11 - r;
    if (check === Number(dic[7]) && czOutcome(dic) === outcome) return dic;
  }
}

describe('Czech register of VAT payers client', () => {
  let sim: SimulatorServer;
  let base: string;
  let close: () => Promise<void>;
  let server: FixtureServer;
  const client = (timeoutMs = 2_000, url = `${base}${ENDPOINT}`) =>
    createCzAdisClient({ url, timeoutMs, now });

  before(async () => {
    ({ sim, base, close } = await startNational('cz', createCzAdisSimulator({ now })));
    server = await startFixtureServer(() => ({ status: 500, body: '' }));
  });
  after(async () => {
    await close();
    await server.close();
  });
  beforeEach(() => {
    sim.control({ cz: { reset: true } });
    server.requests.length = 0;
  });

  describe('against the simulator', () => {
    it('answers a reliable payer with name and address, an unreliable one with the flag', async () => {
      const reliable = asAnswer(await client().lookup(vat('11100001')));
      const company = nationalCompany('CZ', '11100001');
      assert.equal(reliable.valid, true);
      assert.equal(reliable.registerStatus, 'NE');
      assert.deepEqual(reliable.flags, []);
      assert.equal(reliable.name, company.name);
      assert.deepEqual(reliable.address, {
        text: `${company.street}\n${company.postcode} ${company.town}`,
        street: company.street,
        postcode: company.postcode,
        city: company.town,
        country: 'Česká republika',
      });
      const unreliable = asAnswer(await client().lookup(vat('CZ11100010')));
      assert.equal(unreliable.valid, true);
      assert.deepEqual(unreliable.flags, [
        { code: 'unreliable_payer', since: '2024-03-01', registerValue: 'ANO' },
      ]);
    });

    it('answers NENALEZEN as not a VAT payer, and agrees with the VIES simulator', async () => {
      const missing = asAnswer(await client().lookup(vat('11100028')));
      assert.equal(missing.valid, false);
      assert.equal(missing.registerStatus, 'NENALEZEN');
      for (const outcome of ['NE', 'ANO', 'NENALEZEN']) {
        const dic = findDic(outcome);
        assert.equal(
          asAnswer(await client().lookup(vat(dic))).valid,
          nationalCompany('CZ', dic).registered,
          dic,
        );
      }
    });

    it('asks up to 100 DIČ in one request', async () => {
      const dics = Array.from({ length: 101 }, (_, i) =>
        findDic(i % 3 === 0 ? 'NENALEZEN' : 'NE', 23_000_000 + i * 997),
      );
      const results = await client().lookupMany?.(dics.map(vat));
      assert.ok(results);
      for (const [i, dic] of dics.entries()) {
        assert.equal(asAnswer(results[i]).valid, czOutcome(dic) !== 'NENALEZEN', dic);
      }
      const stats = sim.stats().cz as { calls: Record<string, number> };
      assert.equal(stats.calls.CZ, 2);
    });

    it('answers the daily maintenance as down until 0:10 in Prague', async () => {
      const midnight = new Date('2026-09-24T22:03:00Z');
      const atMidnight = () => midnight;
      const {
        sim: nightSim,
        base: nightBase,
        close: closeNight,
      } = await startNational('cz', createCzAdisSimulator({ now: atMidnight }));
      try {
        nightSim.control({ cz: { maintenance: 'auto' } });
        const night = createCzAdisClient({
          url: `${nightBase}${ENDPOINT}`,
          timeoutMs: 2_000,
          now: atMidnight,
        });
        const result = asUnavailable(await night.lookup(vat('11100028')));
        assert.equal(result.reason, 'down');
        assert.equal(result.upstreamCode, 'statusCode 2');
        assert.equal(result.retryAfterSeconds, 7 * 60);
      } finally {
        await closeNight();
      }
      sim.control({ cz: { maintenance: 'auto' } });
      asAnswer(await client().lookup(vat('11100028')));
    });

    it('never answers valid: false for maintenance, an outage, a fault, an HTML page, throttling or a hang', async () => {
      const failures: Record<string, unknown>[] = [
        { maintenance: true },
        { down: ['CZ'] },
        { serviceDown: true },
        { rateLimit: { limit: 0, windowMs: 60_000 } },
        { errorRate: { CZ: { rate: 1, code: 'FAULT' } } },
        { errorRate: { CZ: { rate: 1, code: 'FAULT' } }, errorStatus: 200 },
        { errorRate: { CZ: { rate: 1, code: 'HTML_503' } } },
      ];
      for (const failure of failures) {
        sim.control({ cz: { reset: true, ...failure } });
        for (const dic of ['11100028', '11100001']) asUnavailable(await client().lookup(vat(dic)));
      }
      sim.control({ cz: { reset: true } });
      for (const dic of ['11100036', '11100044', '11100052']) {
        assert.equal(asUnavailable(await client().lookup(vat(dic))).reason, 'down', dic);
      }
      sim.control({ cz: { reset: true, hang: true } });
      assert.equal(asUnavailable(await client(150).lookup(vat('11100028'))).reason, 'timeout');
      assert.equal(
        asUnavailable(await client(2_000, await closedPortUrl()).lookup(vat('11100028'))).reason,
        'down',
      );
    });
  });

  describe('against recorded bodies', () => {
    const fixtureClient = () => client(2_000, `${server.url}${ENDPOINT}`);

    it('posts the extended operation with its SOAPAction and each DIČ', async () => {
      server.use(() => xml(200, fixture('cz-adis/status-rozsireny.xml')));
      const [payer, missing] = (await fixtureClient().lookupMany?.([vat('11100001'), vat('11100028')])) ?? [];
      assert.equal(asAnswer(payer).valid, true);
      assert.equal(asAnswer(missing).valid, false);
      const request = server.requests[0];
      assert.equal(request?.url, ENDPOINT);
      assert.equal(request?.headers.soapaction, `"${CZ_ADIS_SOAP_ACTION}"`);
      assert.match(
        request?.body ?? '',
        /<roz:StatusNespolehlivyPlatceRozsirenyRequest><roz:dic>11100001<\/roz:dic><roz:dic>11100028<\/roz:dic>/,
      );
    });

    it('reads the recorded unreliable payer, maintenance and fault', async () => {
      server.use(() => xml(200, fixture('cz-adis/status-nespolehlivy.xml')));
      assert.equal(
        asAnswer(await fixtureClient().lookup(vat('699001234'))).flags[0]?.code,
        'unreliable_payer',
      );
      server.use(() => xml(200, fixture('cz-adis/status-odstavka.xml')));
      assert.equal(asUnavailable(await fixtureClient().lookup(vat('11100028'))).upstreamCode, 'statusCode 2');
      for (const status of [200, 500]) {
        server.use(() => xml(status, fixture('cz-adis/fault.xml')));
        assert.equal(asUnavailable(await fixtureClient().lookup(vat('11100028'))).reason, 'down');
      }
    });

    it('treats HTML pages, truncated and oversized bodies as unavailable', async () => {
      for (const reply of [
        { status: 200, body: '<html><body>Údržba</body></html>', headers: { 'content-type': 'text/html' } },
        {
          status: 503,
          body: '<html><body>Service Unavailable</body></html>',
          headers: { 'content-type': 'text/html' },
        },
        xml(200, fixture('cz-adis/status-rozsireny.xml').slice(0, 400)),
        xml(200, OVERSIZED),
        xml(200, ''),
      ]) {
        server.use(() => reply);
        asUnavailable(await fixtureClient().lookup(vat('11100028')));
      }
    });
  });
});
