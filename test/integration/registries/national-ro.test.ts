import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { roCui } from '../../../src/registries/national-ids.js';
import { createRoAnafClient, RO_ANAF_LIMITS } from '../../../src/registries/ro-anaf.js';
import { nationalCompany } from '../../../src/simulators/national.js';
import { createRoAnafSimulator, type RoOutcome, roOutcome } from '../../../src/simulators/ro-anaf.js';
import type { SimulatorServer } from '../../../src/simulators/server.js';
import { closedPortUrl, type FixtureServer, fixture, startFixtureServer } from './helpers.js';
import { asAnswer, asUnavailable, OVERSIZED, startNational } from './national-helpers.js';

const NOW = new Date('2026-09-24T10:00:00Z');
const now = () => NOW;
const vat = (national: string) => ({ vat: { country: 'RO', national } });

function findCui(outcome: RoOutcome, start = 30_000_000): string {
  for (let n = start; ; n++) {
    const cui = String(n);
    if (roCui(cui).ok && roOutcome(cui) === outcome) return cui;
  }
}

describe('Romanian ANAF client', () => {
  let sim: SimulatorServer;
  let base: string;
  let close: () => Promise<void>;
  let server: FixtureServer;
  const client = (timeoutMs = 2_000, baseUrl = base) => createRoAnafClient({ baseUrl, timeoutMs, now });

  before(async () => {
    ({ sim, base, close } = await startNational('ro', createRoAnafSimulator({ now })));
    server = await startFixtureServer(() => ({ status: 500, body: '' }));
  });
  after(async () => {
    await close();
    await server.close();
  });
  beforeEach(() => {
    sim.control({ ro: { reset: true } });
    server.requests.length = 0;
  });

  describe('against the simulator', () => {
    it('answers scpTVA true as registered with the registered office and its VAT period', async () => {
      const result = asAnswer(await client().lookup(vat('11100005')));
      const company = nationalCompany('RO', '11100005');
      assert.equal(result.valid, true);
      assert.equal(result.registerStatus, 'scpTVA=true');
      assert.equal(result.name, company.name);
      assert.equal(result.address?.city, company.town);
      assert.equal(result.address?.postcode, company.postcode.padStart(6, '0'));
      assert.equal(result.address?.street, company.street);
      assert.deepEqual(result.registrations, [{ from: '2005-03-01', to: null, kind: null }]);
    });

    it('answers a cancelled registration, an inactive taxpayer and an unknown CUI as not registered', async () => {
      const ended = asAnswer(await client().lookup(vat('11100013')));
      assert.equal(ended.valid, false);
      assert.equal(ended.registrations[0]?.to, '2021-06-30');
      const inactive = asAnswer(await client().lookup(vat('11100021')));
      assert.equal(inactive.valid, false);
      assert.equal(inactive.flags[0]?.code, 'inactive_taxpayer');
      for (const status of [200, 404]) {
        sim.control({ ro: { notFoundStatus: status } });
        assert.equal(asAnswer(await client().lookup(vat('11100030'))).valid, false);
      }
      for (const outcome of ['registered', 'deregistered', 'inactive', 'not_found'] as const) {
        const cui = findCui(outcome);
        assert.equal(
          asAnswer(await client().lookup(vat(cui))).valid,
          nationalCompany('RO', cui).registered,
          cui,
        );
      }
    });

    it('asks up to 100 CUIs in one request, each CUI once', async () => {
      const cuis = Array.from({ length: 120 }, (_, i) =>
        findCui(i % 2 ? 'registered' : 'not_found', 31_000_000 + i * 1009),
      );
      const requests = [...cuis, cuis[5] as string, '1800101221144'].map(vat);
      const results = await client().lookupMany?.(requests);
      assert.ok(results);
      for (const [i, cui] of cuis.entries()) {
        assert.equal(asAnswer(results[i]).valid, roOutcome(cui) === 'registered', cui);
      }
      assert.equal(asAnswer(results[120]).national, cuis[5]);
      assert.equal(asUnavailable(results[121]).reason, 'rejected');
      assert.equal((sim.stats().ro as { calls: Record<string, number> }).calls.RO, 2);
      assert.deepEqual(RO_ANAF_LIMITS.rates, [{ requests: 1, windowMs: 1_000 }]);
    });

    it('answers a second request within the second as throttled by the firewall', async () => {
      sim.control({ ro: { rateLimit: { limit: 1, windowMs: 1_000 } } });
      asAnswer(await client().lookup(vat('11100005')));
      const second = asUnavailable(await client().lookup(vat('11100030')));
      assert.equal(second.reason, 'throttled');
      assert.equal(second.upstreamCode, 'REQUEST_REJECTED');
    });

    it('never answers valid: false for an outage, the firewall, an error page, throttling or a hang', async () => {
      const failures: Record<string, unknown>[] = [
        { serviceDown: true },
        { down: ['RO'] },
        { rateLimit: { limit: 0, windowMs: 60_000 } },
        ...['REQUEST_REJECTED', 'HTTP_429', 'HTML_503', 'HTTP_500'].map((code) => ({
          errorRate: { RO: { rate: 1, code } },
        })),
      ];
      for (const failure of failures) {
        sim.control({ ro: { reset: true, ...failure } });
        for (const cui of ['11100030', '11100013', '11100005'])
          asUnavailable(await client().lookup(vat(cui)));
      }
      sim.control({ ro: { reset: true } });
      assert.equal(asUnavailable(await client().lookup(vat('11100048'))).reason, 'throttled');
      sim.control({ ro: { reset: true, hang: true } });
      assert.equal(asUnavailable(await client(150).lookup(vat('11100030'))).reason, 'timeout');
      assert.equal(
        asUnavailable(await client(2_000, await closedPortUrl()).lookup(vat('11100030'))).reason,
        'down',
      );
    });
  });

  describe('against recorded bodies', () => {
    const fixtureClient = () => client(2_000, server.url);

    it('posts the CUI as a number with the day in Bucharest', async () => {
      server.use(() => ({ status: 200, body: fixture('ro-anaf/found-registered.json') }));
      assert.equal(asAnswer(await fixtureClient().lookup(vat('RO18547290'))).valid, true);
      const request = server.requests[0];
      assert.equal(request?.method, 'POST');
      assert.equal(request?.url, '/api/PlatitorTvaRest/v9/tva');
      assert.equal(request?.headers['content-type'], 'application/json');
      assert.deepEqual(JSON.parse(request?.body ?? 'null'), [{ cui: 18547290, data: '2026-09-24' }]);
    });

    it('reads the recorded notFound and the firewall page', async () => {
      server.use(() => ({ status: 200, body: fixture('ro-anaf/not-found.json') }));
      assert.equal(asAnswer(await fixtureClient().lookup(vat('18547290'))).valid, false);
      server.use(() => ({
        status: 200,
        body: fixture('ro-anaf/firewall-rejected.html.txt'),
        headers: { 'content-type': 'text/html' },
      }));
      assert.equal(asUnavailable(await fixtureClient().lookup(vat('18547290'))).reason, 'throttled');
    });

    it('treats other HTML pages, truncated and oversized bodies as unavailable', async () => {
      for (const reply of [
        {
          status: 200,
          body: '<html><body>Mentenanta</body></html>',
          headers: { 'content-type': 'text/html' },
        },
        {
          status: 503,
          body: '<html><body>Service Unavailable</body></html>',
          headers: { 'content-type': 'text/html' },
        },
        { status: 200, body: fixture('ro-anaf/not-found.json').slice(0, 30) },
        { status: 200, body: OVERSIZED },
        { status: 200, body: '' },
        {
          status: 404,
          body: '<html><body>Not Found</body></html>',
          headers: { 'content-type': 'text/html' },
        },
      ]) {
        server.use(() => reply);
        asUnavailable(await fixtureClient().lookup(vat('18547290')));
      }
    });
  });
});
