import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createPlWhitelistClient, PL_WHITELIST_LIMITS } from '../../../src/registries/pl-whitelist.js';
import { nationalCompany } from '../../../src/simulators/national.js';
import {
  createPlWhitelistSimulator,
  type PlOutcome,
  plOutcome,
} from '../../../src/simulators/pl-whitelist.js';
import type { SimulatorServer } from '../../../src/simulators/server.js';
import { closedPortUrl, type FixtureServer, fixture, startFixtureServer } from './helpers.js';
import { asAnswer, asUnavailable, OVERSIZED, startNational } from './national-helpers.js';

const NOW = new Date('2026-09-24T10:00:00Z');
const now = () => NOW;
const vat = (national: string) => ({ vat: { country: 'PL', national } });

/** The first NIP from 2220000000 up with a valid check digit that the simulator answers `outcome` for. */
function findNip(outcome: PlOutcome): string {
  for (let n = 2_220_000_000; ; n++) {
    const nip = String(n);
    const weights = [6, 5, 7, 2, 3, 4, 5, 6, 7];
    const check = weights.reduce((sum, w, i) => sum + w * Number(nip[i]), 0) % 11;
    if (check === Number(nip[9]) && plOutcome(nip) === outcome) return nip;
  }
}

describe('Polish white list client', () => {
  let sim: SimulatorServer;
  let base: string;
  let close: () => Promise<void>;
  let server: FixtureServer;
  const client = (timeoutMs = 2_000, baseUrl = base) => createPlWhitelistClient({ baseUrl, timeoutMs, now });

  before(async () => {
    ({ sim, base, close } = await startNational('pl', createPlWhitelistSimulator({ now })));
    server = await startFixtureServer(() => ({ status: 500, body: '' }));
  });
  after(async () => {
    await close();
    await server.close();
  });
  beforeEach(() => {
    sim.control({ pl: { reset: true } });
    server.requests.length = 0;
  });

  describe('against the simulator', () => {
    it('answers Czynny as registered with the requestId and the split address', async () => {
      const result = asAnswer(await client().lookup(vat('1110000007')));
      const company = nationalCompany('PL', '1110000007');
      assert.equal(result.valid, true);
      assert.equal(result.registerStatus, 'Czynny');
      assert.match(result.consultationNumber ?? '', /^[0-9a-z]{5}-[0-9a-z]{8}$/);
      assert.equal(result.identifiers.requestId, result.consultationNumber);
      assert.equal(result.name, company.name);
      assert.equal(result.address?.street, company.street);
      assert.equal(result.address?.postcode, `${company.postcode.slice(0, 2)}-${company.postcode.slice(2)}`);
      assert.equal(result.address?.city, company.town);
      assert.equal(result.checkedAt.toISOString(), NOW.toISOString());
    });

    it('answers Zwolniony, Niezarejestrowany and a NIP not on the list as not registered', async () => {
      for (const [nip, status] of [
        ['1110000013', 'Zwolniony'],
        ['1110000036', 'Niezarejestrowany'],
        ['1110000042', null],
      ] as const) {
        const result = asAnswer(await client().lookup(vat(nip)));
        assert.equal(result.valid, false, nip);
        assert.equal(result.registerStatus, status, nip);
        assert.ok(result.consultationNumber, `${nip} keeps the requestId`);
      }
    });

    it('agrees with the VIES simulator on every number the rule decides', async () => {
      for (const outcome of ['Czynny', 'Zwolniony', 'Niezarejestrowany', 'not_listed'] as const) {
        const nip = findNip(outcome);
        const result = asAnswer(await client().lookup(vat(nip)));
        assert.equal(result.valid, nationalCompany('PL', nip).registered, `${nip} (${outcome})`);
      }
    });

    it('asks up to 30 NIPs in one search and answers each in the order asked', async () => {
      const nips = Array.from({ length: 32 }, (_, i) => findNipFrom(2_300_000_000 + i * 1000));
      const requests = [...nips, '1110000008', nips[0] as string].map(vat);
      const results = await client().lookupMany?.(requests);
      assert.ok(results);
      assert.equal(results.length, requests.length);
      nips.forEach((nip, i) => {
        assert.equal(asAnswer(results[i]).national, nip);
        assert.equal(asAnswer(results[i]).valid, plOutcome(nip) === 'Czynny', nip);
      });
      assert.equal(asUnavailable(results[32]).reason, 'rejected');
      assert.equal(asAnswer(results[33]).national, nips[0]);
      const stats = sim.stats().pl as { calls: Record<string, number>; searchesToday: number };
      assert.equal(stats.calls.PL, 2, '32 distinct NIPs in two searches of at most 30');
      assert.equal(PL_WHITELIST_LIMITS.numbersPerRequest, 30);
    });

    it('answers the daily limit as throttled until midnight in Warsaw', async () => {
      sim.control({ pl: { dailyLimit: 1 } });
      asAnswer(await client().lookup(vat('1110000007')));
      const limited = asUnavailable(await client().lookup(vat('1110000013')));
      assert.equal(limited.reason, 'throttled');
      assert.equal(limited.upstreamCode, 'WL-191');
      assert.equal(limited.retryAfterSeconds, 12 * 3600);
      assert.equal(asUnavailable(await client().lookup(vat('1110000059'))).upstreamCode, 'WL-191');
    });

    it('never answers valid: false for an outage, maintenance, an error page, throttling or a hang', async () => {
      const failures: Record<string, unknown>[] = [
        { serviceDown: true },
        { down: ['PL'] },
        { maintenance: true },
        { updating: true },
        { rateLimit: { limit: 0, windowMs: 60_000 } },
        { dailyLimit: 0 },
        ...['WL-100', 'WL-195', 'WL-196', 'HTTP-503', 'HTML_500'].map((code) => ({
          errorRate: { PL: { rate: 1, code } },
        })),
      ];
      for (const failure of failures) {
        sim.control({ pl: { reset: true, ...failure } });
        for (const nip of ['1110000036', '1110000042', '1110000007']) {
          asUnavailable(await client().lookup(vat(nip)));
        }
      }
      sim.control({ pl: { reset: true } });
      for (const nip of ['1110000065', '1110000071'])
        assert.equal(asUnavailable(await client().lookup(vat(nip))).reason, 'down');
      sim.control({ pl: { reset: true, hang: true } });
      assert.equal(asUnavailable(await client(150).lookup(vat('1110000036'))).reason, 'timeout');
      const batch = await client(150).lookupMany?.([vat('1110000036'), vat('1110000042')]);
      assert.deepEqual(
        batch?.map((result) => asUnavailable(result).reason),
        ['timeout', 'timeout'],
      );
      assert.equal(
        asUnavailable(await client(2_000, await closedPortUrl()).lookup(vat('1110000036'))).reason,
        'down',
      );
    });
  });

  describe('against recorded bodies', () => {
    const fixtureClient = () => client(2_000, server.url);

    it('asks /api/search/nip/{nip} for the day in Warsaw, or the day given', async () => {
      server.use(() => ({ status: 200, body: fixture('pl-whitelist/search-nip-active.json') }));
      asAnswer(await fixtureClient().lookup(vat('1110000007')));
      asAnswer(await fixtureClient().lookup({ ...vat('PL1110000007'), date: '2026-01-15' }));
      assert.deepEqual(
        server.requests.map((request) => request.url),
        ['/api/search/nip/1110000007?date=2026-09-24', '/api/search/nip/1110000007?date=2026-01-15'],
      );
      assert.equal(server.requests[0]?.headers.accept, 'application/json');
    });

    it('sends nothing for a NIP with a wrong check digit', async () => {
      assert.equal(asUnavailable(await fixtureClient().lookup(vat('1110000008'))).reason, 'rejected');
      assert.equal(server.requests.length, 0);
    });

    it('reads the recorded batch answer', async () => {
      server.use(() => ({ status: 200, body: fixture('pl-whitelist/search-nips-mixed.json') }));
      const results = await fixtureClient().lookupMany?.([vat('1110000007'), vat('1110000042')]);
      assert.equal(server.requests[0]?.url, '/api/search/nips/1110000007,1110000042?date=2026-09-24');
      assert.equal(asAnswer(results?.[0]).valid, true);
      assert.equal(asAnswer(results?.[1]).valid, false);
    });

    it('treats HTML pages, truncated and oversized bodies as unavailable', async () => {
      const html = '<!DOCTYPE html><html><body>Przerwa techniczna</body></html>';
      for (const reply of [
        { status: 200, body: html, headers: { 'content-type': 'text/html' } },
        { status: 503, body: html, headers: { 'content-type': 'text/html' } },
        { status: 200, body: fixture('pl-whitelist/search-nip-not-listed.json').slice(0, 40) },
        { status: 200, body: OVERSIZED },
        { status: 200, body: '' },
      ]) {
        server.use(() => reply);
        asUnavailable(await fixtureClient().lookup(vat('1110000042')));
      }
    });
  });
});

function findNipFrom(start: number): string {
  const weights = [6, 5, 7, 2, 3, 4, 5, 6, 7];
  for (let n = start; ; n++) {
    const nip = String(n);
    const check = weights.reduce((sum, w, i) => sum + w * Number(nip[i]), 0) % 11;
    const outcome = plOutcome(nip);
    if (check === Number(nip[9]) && outcome !== 'WL-191' && outcome !== 'WL-196' && outcome !== 'HTTP-503')
      return nip;
  }
}
