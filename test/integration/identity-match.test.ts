import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { createManualClock } from '../../src/lib/clock.js';
import { parseVatNumber } from '../../src/modules/vat-numbers/index.js';
import type { RegistryClient, RegistryLookup } from '../../src/registries/port.js';
import { simulatedCompany } from '../../src/simulators/controls.js';
import { germanVatNumberWithCheckDigit } from '../../src/simulators/evatr.js';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { expectedViesAnswer } from '../../src/simulators/vies.js';
import { documentedRows } from '../fixtures/identity-match-examples.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { wellFormedNumbers } from '../helpers/batch-numbers.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

/** The rows of docs/validation.md's table named `marker`, as the fixture keeps them. */
const documented = documentedRows;

const PARAMETER = {
  name: 'company_name',
  street: 'company_street',
  postcode: 'company_postcode',
  city: 'company_city',
};

/**
 * A registry that answers each number with the name and address set for it, recording the trader
 * fields it was sent.
 */
function scriptedRegistry() {
  const companies = new Map<string, { name: string | null; address: string | null }>();
  const sent: RegistryLookup['trader'][] = [];
  const client: RegistryClient = {
    source: 'vies',
    countries: [],
    async lookup(lookup) {
      sent.push(lookup.trader);
      const company = companies.get(`${lookup.vat.country}${lookup.vat.national}`);
      return {
        kind: 'answer',
        source: 'vies',
        valid: company !== undefined,
        name: company?.name ?? null,
        address: company?.address ?? null,
        consultationNumber: null,
        checkedAt: new Date(),
      };
    },
  };
  return { client, companies, sent };
}

function query(vat: string, claim: Record<string, string>): string {
  const params = new URLSearchParams({ vat_number: vat, ...claim });
  return `/v1/validate?${params}`;
}

const ENV = {
  OPENVAT_REGISTRY_BACKOFF_MS: '5',
  OPENVAT_REGISTRY_TIMEOUT_MS: '2000',
  OPENVAT_STATUS_POLL_MS: '0',
  OPENVAT_RATE_LIMIT_PRO: '100000',
};

for (const target of await databaseTargets()) {
  describe(`the identity match on ${target.name}`, { skip: target.skip }, () => {
    let db: TestDb;
    let shared: Db;
    const clock = createManualClock(new Date());

    before(async () => {
      db = await target.open();
      shared = { ...db, close: async () => {} };
    });
    after(() => db.dispose());

    describe('the documented examples, through GET /v1/validate', () => {
      let t: TestApp;
      let live: TestKey;
      const registry = scriptedRegistry();

      before(async () => {
        t = await buildTestApp(ENV, {
          db: shared,
          clock,
          registries: {
            clientForPrefix: () => registry.client,
            viesStatus: { checkStatus: async () => null },
          },
        });
        live = await t.key('pro', 'live');
      });
      after(() => t.close());

      const names = documented('identity-match examples').filter((row) => row[0] === 'name');
      names.forEach(([, claimed, registered, score, result, why], i) => {
        it(`name: ${claimed} against ${registered} (${why})`, async () => {
          const vat = germanVatNumberWithCheckDigit(String(41_000_000 + i));
          registry.companies.set(vat, { name: registered as string, address: null });
          const res = await t.app.inject({
            method: 'GET',
            url: query(vat, { company_name: claimed as string }),
            headers: live.headers,
          });
          assert.equal(res.statusCode, 200, res.body);
          const body = res.json();
          assert.equal(body.data.valid, true, 'the match never changes valid');
          const expected = { result, score: Number(score), registry_result: null };
          assert.deepEqual(body.data.match, { overall: expected, name: expected });
          assert.deepEqual(registry.sent.at(-1), { name: claimed }, 'the claim is sent to the registry');
        });
      });

      const addresses = documented('identity-match addresses');
      addresses.forEach(([country, address, street, postcode, town]) => {
        it(`a recorded ${country} address: each field read out of it matches`, async () => {
          const [vat] = wellFormedNumbers(country as 'DE', 1, 700);
          const parsed = parseVatNumber(vat as string);
          assert.ok(parsed.ok);
          registry.companies.set(parsed.normalised, {
            name: 'ACME',
            address: (address as string).replace(/\\n/g, '\n'),
          });
          const claim: Record<string, string> = {};
          for (const [field, value] of [
            ['street', street],
            ['postcode', postcode],
            ['city', town],
          ] as const) {
            if (value) claim[PARAMETER[field]] = value;
          }
          const body = (
            await t.app.inject({ method: 'GET', url: query(vat as string, claim), headers: live.headers })
          ).json();
          const full = { result: 'match', score: 1, registry_result: null };
          assert.deepEqual(body.data.match.overall, full);
          if (street) assert.deepEqual(body.data.match.street, full);
          if (postcode) assert.deepEqual(body.data.match.postcode, full);
          else assert.equal(body.data.match.postcode, undefined, 'a field not asked is absent');
          assert.deepEqual(body.data.match.city, full);
        });
      });

      it('a stored answer with a name serves a claim from the cache, scored, without a registry verdict', async () => {
        const vat = germanVatNumberWithCheckDigit('42000001');
        registry.companies.set(vat, { name: 'MUELLER BAU GMBH', address: 'Musterstr. 1\n12345 Berlin' });
        const first = await t.app.inject({
          method: 'GET',
          url: `/v1/validate?vat_number=${vat}`,
          headers: live.headers,
        });
        assert.equal(first.json().data.match, undefined, 'no field asked: no match');
        const calls = registry.sent.length;
        const cached = (
          await t.app.inject({
            method: 'GET',
            url: query(vat, { company_name: 'Müller Bau GmbH', company_city: 'Hamburg' }),
            headers: live.headers,
          })
        ).json();
        assert.equal(cached.meta.source_status, 'cached');
        assert.equal(registry.sent.length, calls, 'the registry was not asked');
        assert.deepEqual(cached.data.match.name, { result: 'match', score: 1, registry_result: null });
        assert.equal(cached.data.match.city.result, 'mismatch');
        assert.equal(cached.data.match.overall.result, 'mismatch');
      });

      it('refuses an oversized field with a clear error, and a blank one is not asked', async () => {
        const vat = germanVatNumberWithCheckDigit('42000002');
        const long = await t.app.inject({
          method: 'GET',
          url: query(vat, { company_postcode: '1'.repeat(21) }),
          headers: live.headers,
        });
        assert.equal(long.statusCode, 400);
        assert.equal(long.json().error.code, 'invalid_format');
        assert.match(long.json().error.message, /company_postcode/);
        registry.companies.set(vat, { name: 'ACME GMBH', address: null });
        const blank = await t.app.inject({
          method: 'GET',
          url: query(vat, { company_name: '  ', company_city: '' }),
          headers: live.headers,
        });
        assert.equal(blank.statusCode, 200);
        assert.equal(blank.json().data.match, undefined);
      });
    });

    describe('live against the VIES simulator', () => {
      let sim: SimulatorServer;
      let t: TestApp;
      let live: TestKey;

      before(async () => {
        sim = createSimulatorServer({ latencyMs: 2 });
        const { urls } = await sim.listen(0, '127.0.0.1');
        t = await buildTestApp(
          { ...ENV, VIES_URL: urls.VIES_URL, VIES_SOAP_URL: urls.VIES_SOAP_URL },
          { db: shared, clock },
        );
        live = await t.key('pro', 'live');
      });
      after(async () => {
        await t.close();
        await sim.close();
      });

      const viesCalls = () => (sim.stats() as { vies: { total: number } }).vies.total;
      const registered = (country: string, offset: number) =>
        (wellFormedNumbers(country as 'AT', 60, offset) as string[]).find((vat) => {
          const expected = expectedViesAnswer(country, vat.slice(2));
          return 'valid' in expected && expected.valid;
        }) as string;

      it("a disclosing state: openvat's score over the registered data beside the state's verdict", async () => {
        const vat = registered('AT', 800);
        const company = simulatedCompany('AT', vat.slice(2));
        const res = await t.app.inject({
          method: 'GET',
          url: query(vat, { company_name: company.name, company_city: 'Nowhere' }),
          headers: live.headers,
        });
        assert.equal(res.statusCode, 200, res.body);
        const { data } = res.json();
        assert.equal(data.valid, true);
        assert.deepEqual(data.match.name, { result: 'match', score: 1, registry_result: 'match' });
        assert.equal(data.match.city.result, 'mismatch');
        assert.equal(data.match.city.registry_result, 'mismatch');
        assert.deepEqual(data.match.overall.result, 'mismatch');
        assert.equal(data.match.overall.registry_result, 'mismatch');
      });

      it('Spain discloses nothing (---) but compares: the result follows its verdict', async () => {
        const vat = registered('ES', 900);
        const company = simulatedCompany('ES', vat.slice(2));
        const right = (
          await t.app.inject({
            method: 'GET',
            url: query(vat, { company_name: company.name, company_postcode: '0000' }),
            headers: live.headers,
          })
        ).json();
        assert.equal(right.data.company, null);
        assert.deepEqual(right.data.match.name, { result: 'match', score: null, registry_result: 'match' });
        assert.deepEqual(right.data.match.postcode, {
          result: 'mismatch',
          score: null,
          registry_result: 'mismatch',
        });
        // Stored without a name or address: a claim is answered live again, for the verdicts.
        const before = viesCalls();
        const again = (
          await t.app.inject({
            method: 'GET',
            url: query(vat, { company_name: 'Someone Else SL' }),
            headers: live.headers,
          })
        ).json();
        assert.equal(viesCalls(), before + 1);
        assert.equal(again.meta.source_status, 'live');
        assert.deepEqual(again.data.match.name, {
          result: 'mismatch',
          score: null,
          registry_result: 'mismatch',
        });
        // Without a claim, the stored answer is served as before.
        const plain = (
          await t.app.inject({ method: 'GET', url: `/v1/validate?vat_number=${vat}`, headers: live.headers })
        ).json();
        assert.equal(plain.meta.source_status, 'cached');
        assert.equal(viesCalls(), before + 1);
      });

      it('Germany does not process the fields: not_processed, nothing to compare', async () => {
        const vat = registered('DE', 1000);
        const { data } = (
          await t.app.inject({
            method: 'GET',
            url: query(vat, { company_name: 'Any GmbH' }),
            headers: live.headers,
          })
        ).json();
        assert.equal(data.valid, true);
        assert.deepEqual(data.match.name, {
          result: 'unavailable',
          score: null,
          registry_result: 'not_processed',
        });
        assert.equal(data.match.overall.result, 'unavailable');
      });

      it('concurrent requests share one call only with the same claim', async () => {
        sim.control({ latencyMs: 100 });
        const vat = registered('AT', 1100);
        const before = viesCalls();
        const asks = ['A GmbH', 'A GmbH', 'B GmbH', 'B GmbH'].map((name) =>
          t.app.inject({
            method: 'GET',
            url: `${query(vat, { company_name: name })}&cache=false`,
            headers: live.headers,
          }),
        );
        const answers = await Promise.all(asks);
        assert.ok(answers.every((a) => a.statusCode === 200));
        assert.equal(viesCalls(), before + 2);
        sim.control({ latencyMs: 2 });
      });

      it('batch items as objects carry their claim, plain strings beside them, synchronously and as a job', async () => {
        const vat = registered('AT', 1200);
        const company = simulatedCompany('AT', vat.slice(2));
        const items = [
          vat,
          { vat_number: vat, company_name: company.name },
          { vat_number: vat, company_name: 'Other AG' },
        ];
        const sync = await t.app.inject({
          method: 'POST',
          url: '/v1/validate/batch',
          headers: live.headers,
          payload: { vat_numbers: items },
        });
        assert.equal(sync.statusCode, 200, sync.body);
        const results = sync.json().data.results;
        assert.equal(results[0].data.match, undefined);
        assert.equal(results[1].data.match.name.result, 'match');
        assert.equal(results[2].data.match.name.result, 'mismatch');

        const job = await t.app.inject({
          method: 'POST',
          url: '/v1/validate/batch',
          headers: live.headers,
          payload: { vat_numbers: items, async: true },
        });
        assert.equal(job.statusCode, 202, job.body);
        await t.container.batchWorker.drain();
        const done = (
          await t.app.inject({
            method: 'GET',
            url: `/v1/validate/batch/${job.json().data.id}`,
            headers: live.headers,
          })
        ).json().data;
        assert.equal(done.status, 'completed');
        assert.equal(done.results[0].data.match, undefined);
        assert.deepEqual(done.results[1].data.match.name.result, 'match');
        assert.deepEqual(done.results[2].data.match.name.result, 'mismatch');
      });
    });

    describe('test keys', () => {
      let t: TestApp;
      let key: TestKey;

      before(async () => {
        t = await buildTestApp(ENV, { db: shared, clock });
        key = await t.key('pro', 'test');
      });
      after(() => t.close());

      const get = async (vat: string, claim: Record<string, string>) =>
        (await t.app.inject({ method: 'GET', url: query(vat, claim), headers: key.headers })).json().data;

      it('answer the documented match numbers without calling anything', async () => {
        const claim = {
          company_name: 'Testfirma Muster GmbH',
          company_street: 'Teststr. 1',
          company_postcode: '10115',
          company_city: 'München',
        };
        const full = await get('DE100000008', claim);
        assert.deepEqual(full.match.name, { result: 'match', score: 1, registry_result: null });
        assert.deepEqual(full.match.street, { result: 'match', score: 1, registry_result: null });
        assert.equal(full.match.city.result, 'mismatch');
        assert.equal(full.match.overall.result, 'mismatch');

        const spain = await get('DE110000001', claim);
        assert.equal(spain.company, null);
        assert.deepEqual(spain.match.name, { result: 'match', score: null, registry_result: 'match' });
        assert.deepEqual(spain.match.city, { result: 'mismatch', score: null, registry_result: 'mismatch' });

        const germany = await get('DE120000005', { company_name: 'Testfirma Muster GmbH' });
        assert.deepEqual(germany.match.name, { result: 'match', score: 1, registry_result: 'not_processed' });

        const invalid = await get('DE300000002', { company_name: 'Testfirma Muster GmbH' });
        assert.equal(invalid.valid, false);
        assert.deepEqual(invalid.match.name, { result: 'unavailable', score: null, registry_result: null });
      });
    });
  });
}
