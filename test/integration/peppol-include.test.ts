import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { SML_ZONES } from '../../src/registries/peppol-sml.js';
import { createPeppolSmlSimulator, type PeppolSmlSimulator } from '../../src/simulators/peppol-sml.js';
import { createPeppolSmpSimulator } from '../../src/simulators/peppol-smp.js';
import { type SimulatorServer, serveSimulators } from '../../src/simulators/server.js';
import { createFakeRegistry } from '../fakes/fake-registry.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

const ZONE = SML_ZONES.peppolProduction;

/** DNS queries the SML simulator answered so far. */
const dnsQueries = (sml: PeppolSmlSimulator) => (sml.stats() as { names: string[] }).names.length;

for (const target of await databaseTargets()) {
  describe(`include=peppol on validate and batch, against the SML and SMP simulators on ${target.name}`, {
    skip: target.skip,
  }, () => {
    let smp: SimulatorServer;
    let sml: PeppolSmlSimulator;
    let db: TestDb;
    let t: TestApp;
    let live: TestKey;
    let test: TestKey;
    const clock = createManualClock('2026-12-02T10:00:00.000Z');
    const registry = createFakeRegistry(['BE', 'DE', 'AT', 'NL']);

    before(async () => {
      smp = serveSimulators({ smp: createPeppolSmpSimulator() });
      const { base } = await smp.listen(0);
      sml = createPeppolSmlSimulator({ smpBase: `${base}/peppol-smp` });
      const dns = await sml.listen(0, '127.0.0.1');
      db = await target.open();
      t = await buildTestApp(
        {
          PEPPOL_SML_ZONE: ZONE,
          PEPPOL_DNS_SERVERS: `127.0.0.1:${dns.port}`,
          PEPPOL_DNS_TIMEOUT_MS: '300',
          PEPPOL_SMP_TIMEOUT_MS: '3000',
          PEPPOL_ALLOW_PRIVATE_SMP: 'true',
          OPENVAT_RATE_LIMIT_PRO: '100000',
          OPENVAT_RATE_LIMIT_BUSINESS: '100000',
          OPENVAT_STATUS_POLL_MS: '0',
        },
        { db, clock, registries: registry.ports },
      );
      live = await t.key('business', 'live');
      test = await t.key('business', 'test');
    });
    beforeEach(() => {
      sml.control({ reset: true });
      smp.control({ smp: { reset: true } });
    });
    after(async () => {
      await t.close();
      await db.dispose();
      await sml.close();
      await smp.close();
    });

    const validate = (query: string, key: TestKey = live) =>
      t.app.inject({ method: 'GET', url: `/v1/validate?${query}`, headers: key.headers });
    const batch = (payload: Record<string, unknown>, key: TestKey = live) =>
      t.app.inject({ method: 'POST', url: '/v1/validate/batch', headers: key.headers, payload });

    it('GET /v1/validate?include=peppol adds data.peppol, recorded in the audit record', async () => {
      const response = await validate('vat_number=BE0999000030&include=peppol&cache=false');
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json();
      assert.equal(body.data.valid, true);
      assert.equal(body.data.peppol.identifier, 'BE0999000030');
      assert.equal(body.data.peppol.reachable, true);
      assert.equal(body.data.peppol.can_receive_invoices, true);
      assert.deepEqual(
        body.data.peppol.participants.map((p: { id: string; smp_status: string }) => [p.id, p.smp_status]),
        [
          ['0208:0999000030', 'ok'],
          ['9925:be0999000030', 'ok'],
        ],
      );
      assert.equal(body.meta.source, 'vies', 'meta is the VAT answer’s');
      const audit = await t.app.inject({
        method: 'GET',
        url: `/v1/audits/${body.meta.request_id}`,
        headers: live.headers,
      });
      assert.deepEqual(audit.json().data.response.data.peppol, body.data.peppol);
      const plain = (await validate('vat_number=BE0999000030')).json();
      assert.equal('peppol' in plain.data, false, 'no part without include');
    });

    it('a Peppol outage is the part’s error alone: the VAT answer is 200 and unchanged', async () => {
      const response = await validate('vat_number=ATU99990019&include=peppol');
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json();
      assert.equal(body.data.valid, true);
      assert.equal(body.data.peppol.error.code, 'registry_unavailable');
      assert.match(body.data.peppol.error.message, /SML could not be asked/);
      registry.set('DE999000009', { valid: false, name: null, address: null });
      const invalid = (await validate('vat_number=DE999000009&include=peppol')).json();
      assert.equal(invalid.data.valid, false, 'Peppol registration never makes a number valid');
      assert.equal(invalid.data.peppol.reachable, true);
      registry.set('DE999000009', { valid: true, name: 'Alpen Software GmbH', address: 'Weg 1' });
    });

    it('an unknown include value is 400 invalid_format in the error envelope, before any look-up', async () => {
      const calls = registry.calls.length;
      const queries = dnsQueries(sml);
      const response = await validate('vat_number=BE0999000030&include=peppol,vies_proof');
      assert.equal(response.statusCode, 400, response.body);
      const error = response.json().error;
      assert.equal(error.code, 'invalid_format');
      assert.equal(error.details.field, 'include');
      assert.match(error.message, /"vies_proof" is not a part/);
      const badBatch = await batch({ vat_numbers: ['BE0999000030'], include: ['peppol', 'Bogus'] });
      assert.equal(badBatch.statusCode, 400, badBatch.body);
      assert.equal(badBatch.json().error.details.field, 'include');
      assert.equal(registry.calls.length, calls, 'no registry call');
      assert.equal(dnsQueries(sml), queries, 'no DNS query');
    });

    it('test keys answer the part from the fixed table without a DNS query', async () => {
      const queries = dnsQueries(sml);
      const response = await validate('vat_number=DE100000008&include=peppol', test);
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().data.peppol.reachable, false);
      const belgian = (await validate('vat_number=BE0999000030&include=peppol', test)).json();
      assert.equal(belgian.data.peppol.reachable, true);
      assert.equal(dnsQueries(sml), queries, 'no DNS query');
    });

    it('POST /v1/validate/batch with "include": ["peppol"] adds the part to each successful item', async () => {
      const response = await batch({
        vat_numbers: ['BE0999000030', 'be 0999 000 030', 'ATU99990019', 'DE1', 'NL999000001B01'],
        include: ['peppol'],
      });
      assert.equal(response.statusCode, 200, response.body);
      const results = response.json().data.results;
      assert.equal(results[0].data.peppol.reachable, true);
      assert.deepEqual(results[1], results[0]);
      assert.equal(results[2].ok, true);
      assert.equal(results[2].data.peppol.error.code, 'registry_unavailable');
      assert.equal(results[3].ok, false, 'a malformed number has no part');
      assert.equal('peppol' in results[3], false);
      const down = results[4].data.peppol.participants.find((p: { registered: boolean }) => p.registered);
      assert.equal(down.smp_status, 'unavailable');
      assert.equal(results[4].data.peppol.can_receive_invoices, null);
      assert.deepEqual(response.json().data.summary, { total: 5, successful: 4, failed: 1 });
    });

    it('a batch job with "include": ["peppol"] stores each item’s part with its result', async () => {
      const created = await batch({
        vat_numbers: ['DE999000009', 'ATU99990019', 'DE100000008'],
        include: ['peppol'],
        async: true,
      });
      assert.equal(created.statusCode, 202, created.body);
      await t.container.batchWorker.drain();
      const job = await t.app.inject({
        method: 'GET',
        url: `/v1/validate/batch/${created.json().data.id}`,
        headers: live.headers,
      });
      const data = job.json().data;
      assert.equal(data.status, 'completed', job.body);
      assert.equal(data.results[0].data.peppol.can_receive_invoices, true);
      assert.equal(data.results[1].data.peppol.error.code, 'registry_unavailable');
      assert.equal(data.results[2].data.peppol.reachable, false);
      const plain = await batch({ vat_numbers: ['DE999000009'], async: true });
      await t.container.batchWorker.drain();
      const plainJob = await t.app.inject({
        method: 'GET',
        url: `/v1/validate/batch/${plain.json().data.id}`,
        headers: live.headers,
      });
      assert.equal('peppol' in plainJob.json().data.results[0].data, false);
    });
  });
}
