import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createBfsClient } from '../../../src/registries/bfs.js';
import { createBrregClient } from '../../../src/registries/brreg.js';
import type { RegistryAnswer, RegistryResult, RegistryUnavailable } from '../../../src/registries/port.js';
import { bfsRegistered, swissCheckDigit } from '../../../src/simulators/bfs.js';
import { type BrregOutcome, brregOutcome } from '../../../src/simulators/brreg.js';
import type { SimulatorServer, SimulatorUrls } from '../../../src/simulators/server.js';
import { type FixtureServer, fixture, startFixtureServer, startSimulator } from './helpers.js';

function asAnswer(result: RegistryResult): RegistryAnswer {
  assert.equal(result.kind, 'answer', `expected an answer, got ${JSON.stringify(result)}`);
  return result as RegistryAnswer;
}

function asUnavailable(result: RegistryResult): RegistryUnavailable {
  assert.equal(result.kind, 'unavailable', `expected unavailable, got ${JSON.stringify(result)}`);
  return result as RegistryUnavailable;
}

/** A Swiss UID with a correct check digit, registered or not per the simulator's rule. */
function findUid(registered: boolean): string {
  for (let n = 10_000_000; ; n++) {
    const check = swissCheckDigit(String(n));
    if (check === null) continue;
    const uid = `${n}${check}`;
    if (bfsRegistered(uid) === registered) return uid;
  }
}

function findOrgnr(outcome: BrregOutcome): string {
  for (let n = 900_000_000; ; n++) if (brregOutcome(String(n)) === outcome) return String(n);
}

const xml = (status: number, body: string) => ({
  status,
  body,
  headers: { 'content-type': 'text/xml; charset=utf-8' },
});

describe('Swiss UID register and Brønnøysund clients', () => {
  let sim: SimulatorServer;
  let urls: SimulatorUrls;
  let close: () => Promise<void>;
  let server: FixtureServer;

  before(async () => {
    ({ sim, urls, close } = await startSimulator());
    server = await startFixtureServer(() => ({ status: 500, body: '' }));
  });
  after(async () => {
    await close();
    await server.close();
  });
  beforeEach(() => {
    sim.control({ all: { reset: true } });
    server.requests.length = 0;
  });

  describe('BFS against the simulator', () => {
    const client = (timeoutMs = 2_000) => createBfsClient({ baseUrl: urls.BFS_URL, timeoutMs });

    it('answers registered and unregistered UIDs', async () => {
      const yes = asAnswer(await client().lookup({ vat: { country: 'CH', national: findUid(true) } }));
      assert.equal(yes.valid, true);
      assert.equal(yes.source, 'bfs');
      assert.equal(yes.name, null);
      const no = asAnswer(await client().lookup({ vat: { country: 'CH', national: findUid(false) } }));
      assert.equal(no.valid, false);
    });

    it('answers throttled over the request limit (20 per minute)', async () => {
      sim.control({ bfs: { rateLimit: { limit: 20, windowMs: 60_000 } } });
      const uid = findUid(true);
      for (let i = 0; i < 20; i++) asAnswer(await client().lookup({ vat: { country: 'CH', national: uid } }));
      for (const errorStatus of [500, 200]) {
        sim.control({ bfs: { errorStatus } });
        const result = asUnavailable(await client().lookup({ vat: { country: 'CH', national: uid } }));
        assert.equal(result.reason, 'throttled');
        assert.equal(result.upstreamCode, 'Request_limit_exceeded');
      }
    });

    it('reports outages and hangs', async () => {
      sim.control({ bfs: { down: ['CH'] } });
      assert.equal(
        asUnavailable(await client().lookup({ vat: { country: 'CH', national: findUid(true) } })).reason,
        'down',
      );
      sim.control({ bfs: { reset: true, hang: true } });
      const hung = asUnavailable(
        await client(150).lookup({ vat: { country: 'CH', national: findUid(true) } }),
      );
      assert.equal(hung.reason, 'timeout');
    });
  });

  describe('BFS against recorded bodies', () => {
    const client = () =>
      createBfsClient({ baseUrl: `${server.url}/V5.0/PublicServices.svc`, timeoutMs: 2_000 });
    const CH = { country: 'CH', national: '116281710' };

    it('sends ValidateVatNumber with the SOAPAction and the formatted number', async () => {
      server.use(() => xml(200, fixture('bfs/validate-true.xml')));
      assert.equal(asAnswer(await client().lookup({ vat: CH })).valid, true);
      const request = server.requests[0];
      assert.ok(request);
      assert.equal(request.url, '/V5.0/PublicServices.svc');
      assert.equal(
        request.headers.soapaction,
        '"http://www.uid.admin.ch/xmlns/uid-wse/IPublicServices/ValidateVatNumber"',
      );
      assert.match(request.body, /<uid:vatNumber>CHE-116\.281\.710 MWST<\/uid:vatNumber>/);
      server.use(() => xml(200, fixture('bfs/validate-false.xml')));
      assert.equal(asAnswer(await client().lookup({ vat: CH })).valid, false);
    });

    it('maps faults sent with HTTP 200 or 500', async () => {
      for (const status of [200, 500]) {
        server.use(() => xml(status, fixture('bfs/fault-request-limit.xml')));
        const limited = asUnavailable(await client().lookup({ vat: CH }));
        assert.equal(limited.reason, 'throttled');
        assert.equal(limited.upstreamCode, 'Request_limit_exceeded');
        server.use(() => xml(status, fixture('bfs/fault-data-validation.xml')));
        const invalid = asUnavailable(await client().lookup({ vat: CH }));
        assert.equal(invalid.reason, 'rejected');
        assert.equal(invalid.upstreamCode, 'Data_validation_failed');
      }
    });

    it('never reads garbage as valid:false', async () => {
      server.use(() => ({
        status: 503,
        body: fixture('vies/html-503.html'),
        headers: { 'content-type': 'text/html' },
      }));
      assert.equal(asUnavailable(await client().lookup({ vat: CH })).reason, 'down');
      server.use(() => xml(200, fixture('bfs/validate-true.xml').slice(0, 90)));
      assert.equal(asUnavailable(await client().lookup({ vat: CH })).reason, 'bad_response');
      server.use(() => xml(200, fixture('vies/soap-valid.xml')));
      assert.equal(asUnavailable(await client().lookup({ vat: CH })).reason, 'bad_response');
      server.use(() => ({ status: 429, body: '' }));
      assert.equal(asUnavailable(await client().lookup({ vat: CH })).reason, 'throttled');
    });
  });

  describe('Brønnøysund against the simulator', () => {
    const client = () => createBrregClient({ baseUrl: urls.BRREG_URL, timeoutMs: 2_000 });

    it('answers the four outcomes', async () => {
      const vat = asAnswer(
        await client().lookup({ vat: { country: 'NO', national: findOrgnr('vat_registered') } }),
      );
      assert.equal(vat.valid, true);
      assert.ok(vat.name?.endsWith(' AS'));
      assert.match(vat.address ?? '', /\n\d{4} /);
      for (const outcome of ['not_vat_registered', 'not_found', 'deleted'] as const) {
        const answer = asAnswer(
          await client().lookup({ vat: { country: 'NO', national: findOrgnr(outcome) } }),
        );
        assert.equal(answer.valid, false, outcome);
      }
    });

    it('strips the MVA suffix and reports outages and throttling', async () => {
      const orgnr = findOrgnr('vat_registered');
      assert.equal(
        asAnswer(await client().lookup({ vat: { country: 'NO', national: `${orgnr}MVA` } })).valid,
        true,
      );
      sim.control({ brreg: { down: ['NO'] } });
      assert.equal(
        asUnavailable(await client().lookup({ vat: { country: 'NO', national: orgnr } })).reason,
        'down',
      );
      sim.control({ brreg: { reset: true, errorRate: { NO: { rate: 1, code: 'TOO_MANY_REQUESTS' } } } });
      assert.equal(
        asUnavailable(await client().lookup({ vat: { country: 'NO', national: orgnr } })).reason,
        'throttled',
      );
    });
  });

  describe('Brønnøysund against recorded bodies', () => {
    const client = () => createBrregClient({ baseUrl: server.url, timeoutMs: 2_000 });
    const NO = { country: 'NO', national: '995525828' };

    it('reads a VAT-registered unit with name and business address', async () => {
      server.use(() => ({ status: 200, body: fixture('brreg/enhet-vat.json') }));
      const answer = asAnswer(await client().lookup({ vat: NO }));
      assert.equal(answer.valid, true);
      assert.equal(answer.name, 'EKSEMPEL BEDRIFT AS');
      assert.equal(answer.address, 'Storgata 1\n0150 OSLO');
      assert.equal(server.requests[0]?.url, '/enhetsregisteret/api/enheter/995525828');
      assert.match(
        String(server.requests[0]?.headers.accept),
        /application\/vnd\.enhetsregisteret\.enhet\.v1\+json/,
      );
    });

    it('answers valid:false for a unit outside the VAT register, 404 and 410', async () => {
      server.use(() => ({ status: 200, body: fixture('brreg/enhet-not-vat.json') }));
      const notVat = asAnswer(
        await createBrregClient({ baseUrl: server.url, timeoutMs: 2_000 }).lookup({
          vat: { country: 'NO', national: '974760673' },
        }),
      );
      assert.equal(notVat.valid, false);
      assert.equal(notVat.name, 'EKSEMPEL FORENING');
      // Each body names the unit it answers for: the 404 in its path, the 410 as the deleted unit.
      for (const [status, file, orgnr] of [
        [404, 'brreg/404.json', '123456785'],
        [410, 'brreg/410.json', '912345678'],
      ] as const) {
        server.use(() => ({ status, body: fixture(file) }));
        const answer = asAnswer(await client().lookup({ vat: { country: 'NO', national: orgnr } }));
        assert.equal(answer.valid, false, String(status));
      }
    });

    it('maps 400, 5xx, garbage, a wrong unit and hangs', async () => {
      server.use(() => ({ status: 400, body: fixture('brreg/400.json') }));
      assert.equal(asUnavailable(await client().lookup({ vat: NO })).reason, 'rejected');
      server.use(() => ({ status: 503, body: '' }));
      assert.equal(asUnavailable(await client().lookup({ vat: NO })).reason, 'down');
      server.use(() => ({ status: 200, body: '{"organisasjonsnummer":"995525828"' }));
      assert.equal(asUnavailable(await client().lookup({ vat: NO })).reason, 'bad_response');
      server.use(() => ({ status: 200, body: fixture('brreg/enhet-not-vat.json') }));
      assert.equal(asUnavailable(await client().lookup({ vat: NO })).reason, 'bad_response');
      server.use(() => 'hang');
      const hung = createBrregClient({ baseUrl: server.url, timeoutMs: 100 });
      assert.equal(asUnavailable(await hung.lookup({ vat: NO })).reason, 'timeout');
    });
  });
});
