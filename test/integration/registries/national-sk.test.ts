import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { skIcDph } from '../../../src/registries/national-ids.js';
import { createSkFinancnaSpravaClient } from '../../../src/registries/sk-financnasprava.js';
import { nationalCompany } from '../../../src/simulators/national.js';
import type { SimulatorServer } from '../../../src/simulators/server.js';
import {
  createSkFinancnaSpravaSimulator,
  type SkOutcome,
  skOutcome,
} from '../../../src/simulators/sk-financnasprava.js';
import { closedPortUrl, type FixtureServer, fixture, startFixtureServer } from './helpers.js';
import { asAnswer, asUnavailable, OVERSIZED, startNational } from './national-helpers.js';

const NOW = new Date('2026-09-24T10:00:00Z');
const now = () => NOW;
const KEY = 'sk-test-key';
const vat = (national: string) => ({ vat: { country: 'SK', national } });

function findDigits(outcome: SkOutcome, start = 2_130_000_000): string {
  for (let n = start; ; n++) {
    const digits = String(n);
    if (n % 11 === 0 && skIcDph(digits).ok && skOutcome(digits) === outcome) return digits;
  }
}

describe('Slovak Financial Administration client', () => {
  let sim: SimulatorServer;
  let base: string;
  let close: () => Promise<void>;
  let server: FixtureServer;
  const client = (options: { timeoutMs?: number; baseUrl?: string; apiKey?: string } = {}) =>
    createSkFinancnaSpravaClient({
      baseUrl: options.baseUrl ?? base,
      apiKey: options.apiKey ?? KEY,
      timeoutMs: options.timeoutMs ?? 2_000,
      now,
    });

  before(async () => {
    ({ sim, base, close } = await startNational('sk', createSkFinancnaSpravaSimulator({ now, apiKey: KEY })));
    server = await startFixtureServer(() => ({ status: 500, body: '' }));
  });
  after(async () => {
    await close();
    await server.close();
  });
  beforeEach(() => {
    sim.control({ sk: { reset: true } });
    server.requests.length = 0;
  });

  describe('against the simulator', () => {
    it('answers an entry on the list of VAT payers as registered, with name, address and §', async () => {
      const result = asAnswer(await client().lookup(vat('2120000003')));
      const company = nationalCompany('SK', '2120000003');
      assert.equal(result.valid, true);
      assert.equal(result.registrationScope, 'domestic');
      assert.equal(result.registerStatus, '§4');
      assert.equal(result.identifiers.icDph, 'SK2120000003');
      assert.equal(result.name, company.name);
      assert.deepEqual(result.address, {
        text: `${company.street}\n${company.postcode} ${company.town}`,
        street: company.street,
        postcode: company.postcode,
        city: company.town,
        country: 'Slovensko',
      });
      assert.deepEqual(result.registrations, [{ from: '2004-05-01', to: null, kind: '§4' }]);
      assert.deepEqual(result.flags, []);
    });

    it('flags a payer on the list of grounds for cancellation', async () => {
      const result = asAnswer(await client().lookup(vat('2120000014')));
      assert.equal(result.valid, true);
      assert.deepEqual(result.flags, [
        { code: 'deregistration_grounds', since: '2026-03-15', registerValue: '2025' },
      ]);
    });

    it('answers a deregistered payer and a number on no list as not registered', async () => {
      const deregistered = asAnswer(await client().lookup(vat('2120000025')));
      assert.equal(deregistered.valid, false);
      assert.equal(deregistered.registerStatus, 'ds_dphv');
      assert.deepEqual(deregistered.registrations, [{ from: null, to: '2024-06-30', kind: 'ds_dphv' }]);
      const unknown = asAnswer(await client().lookup(vat('2120000036')));
      assert.equal(unknown.valid, false);
      assert.equal(unknown.registerStatus, null);
      for (const outcome of ['registered', 'deregistered', 'not_found'] as const) {
        const digits = findDigits(outcome);
        assert.equal(
          asAnswer(await client().lookup(vat(digits))).valid,
          nationalCompany('SK', digits).registered,
          digits,
        );
      }
    });

    it('asks ds_dphs with the key, then ds_dphz or ds_dphv: two requests a lookup', async () => {
      sim.control({ sk: { resetStats: true } });
      await client().lookup(vat('2120000003'));
      await client().lookup(vat('2120000036'));
      const stats = sim.stats() as { sk: { calls: Record<string, number> } };
      assert.equal(stats.sk.calls.SK, 4);
    });

    it('never answers valid: false for a refused key, an outage, an error, throttling or a hang', async () => {
      const failures: Record<string, unknown>[] = [
        { keyRejected: true },
        { serviceDown: true },
        { down: ['SK'] },
        { rateLimit: { limit: 0, windowMs: 60_000 } },
        { errorRate: { SK: { rate: 1, code: 'HTTP_500' } } },
        { errorRate: { SK: { rate: 1, code: 'HTML_503' } } },
      ];
      for (const failure of failures) {
        sim.control({ sk: { reset: true, ...failure } });
        for (const digits of ['2120000036', '2120000025', '2120000003'])
          asUnavailable(await client().lookup(vat(digits)));
      }
      sim.control({ sk: { reset: true } });
      const refused = asUnavailable(await client({ apiKey: 'another' }).lookup(vat('2120000036')));
      assert.equal(refused.reason, 'rejected');
      assert.equal(refused.retryable, false);
      assert.doesNotMatch(refused.message, /another/);
      sim.control({ sk: { reset: true, rateLimit: { limit: 0, windowMs: 60_000 } } });
      assert.equal(asUnavailable(await client().lookup(vat('2120000036'))).reason, 'throttled');
      sim.control({ sk: { reset: true } });
      assert.equal(asUnavailable(await client().lookup(vat('2120000047'))).reason, 'down');
      // The second list failing leaves no answer: the first list's alone is not given.
      sim.control({ sk: { reset: true, rateLimit: { limit: 1, windowMs: 60_000 } } });
      const half = asUnavailable(await client().lookup(vat('2120000036')));
      assert.match(half.message, /ds_dphv/);
      sim.control({ sk: { reset: true, hang: true } });
      assert.equal(
        asUnavailable(await client({ timeoutMs: 150 }).lookup(vat('2120000036'))).reason,
        'timeout',
      );
      assert.equal(
        asUnavailable(await client({ baseUrl: await closedPortUrl() }).lookup(vat('2120000036'))).reason,
        'down',
      );
    });
  });

  describe('against recorded bodies', () => {
    const fixtureClient = () => client({ baseUrl: server.url });

    it('searches the ic_dph column with SK and the digits, the key in its header', async () => {
      server.use((request) =>
        request.url.includes('/ds_dphs/')
          ? { status: 200, body: fixture('sk-financnasprava/search-ds_dphs-found.json') }
          : { status: 404, body: fixture('sk-financnasprava/search-miss-404.json') },
      );
      const result = asAnswer(await fixtureClient().lookup(vat('SK2120000003')));
      assert.equal(result.valid, true);
      assert.equal(result.name, 'Vzorová obchodná, spol. s r.o.');
      assert.deepEqual(result.identifiers, { icDph: 'SK2120000003', ico: '31333532' });
      assert.deepEqual(
        server.requests.map((request) => request.url),
        [
          '/api/data/ds_dphs/search?column=ic_dph&search=SK2120000003&page=1',
          '/api/data/ds_dphz/search?column=ic_dph&search=SK2120000003&page=1',
        ],
      );
      assert.equal(server.requests[0]?.headers.key, KEY);
      assert.equal(asUnavailable(await fixtureClient().lookup(vat('0120000003'))).reason, 'rejected');
      assert.equal(server.requests.length, 2, 'a number the lists cannot hold is not sent');
    });

    it("reads the recorded miss as not registered, and an unknown list's 404 as unavailable", async () => {
      server.use(() => ({ status: 404, body: fixture('sk-financnasprava/search-miss-404.json') }));
      assert.equal(asAnswer(await fixtureClient().lookup(vat('2120000036'))).valid, false);
      server.use(() => ({ status: 404, body: fixture('sk-financnasprava/list-not-found-404.json') }));
      assert.equal(asUnavailable(await fixtureClient().lookup(vat('2120000036'))).reason, 'bad_response');
      server.use((request) =>
        request.url.includes('/ds_dphs/')
          ? { status: 404, body: fixture('sk-financnasprava/search-miss-404.json') }
          : { status: 200, body: fixture('sk-financnasprava/search-ds_dphv-found.json') },
      );
      const deregistered = asAnswer(await fixtureClient().lookup(vat('2120000025')));
      assert.equal(deregistered.valid, false);
      assert.equal(deregistered.name, 'Ukončená služby s.r.o.');
    });

    it('treats HTML pages, truncated and oversized bodies as unavailable', async () => {
      for (const reply of [
        { status: 200, body: '<html><body>Údržba</body></html>', headers: { 'content-type': 'text/html' } },
        {
          status: 404,
          body: '<html><body>Not Found</body></html>',
          headers: { 'content-type': 'text/html' },
        },
        { status: 200, body: fixture('sk-financnasprava/search-ds_dphs-found.json').slice(0, 90) },
        { status: 200, body: OVERSIZED },
        { status: 200, body: '' },
      ]) {
        server.use(() => reply);
        asUnavailable(await fixtureClient().lookup(vat('2120000036')));
      }
    });
  });
});
