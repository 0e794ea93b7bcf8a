import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createFiPrhClient } from '../../../src/registries/fi-prh.js';
import { fiBusinessId } from '../../../src/registries/national-ids.js';
import { createFiPrhSimulator, type FiOutcome, fiOutcome } from '../../../src/simulators/fi-prh.js';
import { nationalCompany } from '../../../src/simulators/national.js';
import type { SimulatorServer } from '../../../src/simulators/server.js';
import { closedPortUrl, type FixtureServer, fixture, startFixtureServer } from './helpers.js';
import { asAnswer, asUnavailable, OVERSIZED, startNational } from './national-helpers.js';

const NOW = new Date('2026-09-24T10:00:00Z');
const now = () => NOW;
const vat = (national: string) => ({ vat: { country: 'FI', national } });

function findDigits(outcome: FiOutcome, start = 20_000_000): string {
  for (let n = start; ; n++) {
    const digits = String(n);
    if (fiBusinessId(digits).ok && fiOutcome(digits) === outcome) return digits;
  }
}

describe('Finnish PRH/YTJ client', () => {
  let sim: SimulatorServer;
  let base: string;
  let close: () => Promise<void>;
  let server: FixtureServer;
  const client = (timeoutMs = 2_000, baseUrl = base) => createFiPrhClient({ baseUrl, timeoutMs, now });

  before(async () => {
    ({ sim, base, close } = await startNational('fi', createFiPrhSimulator({ now })));
    server = await startFixtureServer(() => ({ status: 500, body: '' }));
  });
  after(async () => {
    await close();
    await server.close();
  });
  beforeEach(() => {
    sim.control({ fi: { reset: true } });
    server.requests.length = 0;
  });

  describe('against the simulator', () => {
    it('answers a running VAT-register entry as registered, with name and street address', async () => {
      const result = asAnswer(await client().lookup(vat('11100007')));
      const company = nationalCompany('FI', '11100007');
      assert.equal(result.valid, true);
      assert.equal(result.registerStatus, '80');
      assert.deepEqual(result.identifiers, { businessId: '1110000-7' });
      assert.equal(result.name, company.name);
      assert.deepEqual(result.address, {
        text: `${company.street}\n${company.postcode} ${company.town}`,
        street: company.street,
        postcode: company.postcode,
        city: company.town,
        country: null,
      });
    });

    it('answers no VAT-register entry, an ended one and an unknown business ID as not registered', async () => {
      for (const digits of ['11100015', '11100023', '11100031']) {
        assert.equal(asAnswer(await client().lookup(vat(digits))).valid, false, digits);
      }
      assert.equal(asAnswer(await client().lookup({ ...vat('11100023'), date: '2021-06-30' })).valid, true);
      for (const outcome of ['vat_registered', 'no_vat_entry', 'vat_ended', 'not_found'] as const) {
        const digits = findDigits(outcome);
        assert.equal(
          asAnswer(await client().lookup(vat(digits))).valid,
          nationalCompany('FI', digits).registered,
          digits,
        );
      }
    });

    it('never answers valid: false for an outage, an error, throttling or a hang', async () => {
      const failures: Record<string, unknown>[] = [
        { serviceDown: true },
        { down: ['FI'] },
        { rateLimit: { limit: 0, windowMs: 60_000 } },
        { errorRate: { FI: { rate: 1, code: 'HTTP_500' } } },
        { errorRate: { FI: { rate: 1, code: 'HTML_503' } } },
      ];
      for (const failure of failures) {
        sim.control({ fi: { reset: true, ...failure } });
        for (const digits of ['11100031', '11100015', '11100007'])
          asUnavailable(await client().lookup(vat(digits)));
      }
      sim.control({ fi: { reset: true, rateLimit: { limit: 0, windowMs: 60_000 } } });
      assert.equal(asUnavailable(await client().lookup(vat('11100031'))).reason, 'throttled');
      sim.control({ fi: { reset: true } });
      assert.equal(asUnavailable(await client().lookup(vat('11100058'))).reason, 'down');
      sim.control({ fi: { reset: true, hang: true } });
      assert.equal(asUnavailable(await client(150).lookup(vat('11100031'))).reason, 'timeout');
      assert.equal(
        asUnavailable(await client(2_000, await closedPortUrl()).lookup(vat('11100031'))).reason,
        'down',
      );
    });
  });

  describe('against recorded bodies', () => {
    const fixtureClient = () => client(2_000, server.url);

    it('asks by the Y-tunnus with its hyphen', async () => {
      server.use(() => ({ status: 200, body: fixture('fi-prh/company-vat.json') }));
      assert.equal(asAnswer(await fixtureClient().lookup(vat('FI11100007'))).valid, true);
      assert.equal(server.requests[0]?.url, '/opendata-ytj-api/v3/companies?businessId=1110000-7');
      assert.equal(server.requests[0]?.headers.accept, 'application/json');
      assert.equal(asUnavailable(await fixtureClient().lookup(vat('11100008'))).reason, 'rejected');
      assert.equal(server.requests.length, 1, 'a wrong check digit is not sent');
    });

    it('reads the recorded empty answer and error body', async () => {
      server.use(() => ({ status: 200, body: fixture('fi-prh/not-found.json') }));
      assert.equal(asAnswer(await fixtureClient().lookup(vat('11100031'))).valid, false);
      server.use(() => ({ status: 400, body: fixture('fi-prh/error-400.json') }));
      assert.equal(asUnavailable(await fixtureClient().lookup(vat('11100031'))).reason, 'rejected');
    });

    it('treats HTML pages, truncated and oversized bodies as unavailable', async () => {
      for (const reply of [
        {
          status: 200,
          body: '<html><body>Huoltokatko</body></html>',
          headers: { 'content-type': 'text/html' },
        },
        {
          status: 503,
          body: '<html><body>Service Unavailable</body></html>',
          headers: { 'content-type': 'text/html' },
        },
        { status: 200, body: fixture('fi-prh/company-no-vat.json').slice(0, 200) },
        { status: 200, body: OVERSIZED },
        { status: 200, body: '' },
      ]) {
        server.use(() => reply);
        asUnavailable(await fixtureClient().lookup(vat('11100031')));
      }
    });
  });
});
