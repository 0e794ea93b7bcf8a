import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { SML_ZONES } from '../../src/registries/peppol-sml.js';
import { createPeppolSmlSimulator, type PeppolSmlSimulator } from '../../src/simulators/peppol-sml.js';
import { createPeppolSmpSimulator } from '../../src/simulators/peppol-smp.js';
import { type SimulatorServer, serveSimulators } from '../../src/simulators/server.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

interface Participant {
  id: string;
  registered: boolean | null;
  sml_status: string;
  sml_error: string | null;
  smp_status: string | null;
}

const dnsQueries = (sml: PeppolSmlSimulator) => (sml.stats() as { queries: number }).queries;
const smpCalls = (smp: SimulatorServer) => (smp.stats().smp as { total: number }).total;

for (const target of await databaseTargets()) {
  describe(`Peppol look-ups when part of the SML or an SMP fails, on ${target.name}`, {
    skip: target.skip,
  }, () => {
    let smp: SimulatorServer;
    let sml: PeppolSmlSimulator;
    let db: TestDb;
    /** Breakers out of the way: one participant's failure at a time. */
    let t: TestApp;
    /** Breakers that open after two failures, for a minute. */
    let tight: TestApp;
    let key: TestKey;
    let tightKey: TestKey;
    let smpHost: string;
    const clock = createManualClock('2026-12-02T10:00:00.000Z');

    before(async () => {
      smp = serveSimulators({ smp: createPeppolSmpSimulator() });
      const { base } = await smp.listen(0);
      smpHost = new URL(base).host;
      sml = createPeppolSmlSimulator({ smpBase: `${base}/peppol-smp` });
      const dns = await sml.listen(0, '127.0.0.1');
      db = await target.open();
      const env = {
        PEPPOL_SML_ZONE: SML_ZONES.peppolProduction,
        PEPPOL_DNS_SERVERS: `127.0.0.1:${dns.port}`,
        PEPPOL_DNS_TIMEOUT_MS: '300',
        PEPPOL_SMP_TIMEOUT_MS: '3000',
        PEPPOL_ALLOW_PRIVATE_SMP: 'true',
        OPENVAT_RATE_LIMIT_PRO: '100000',
        OPENVAT_STATUS_POLL_MS: '0',
      };
      t = await buildTestApp({ ...env, OPENVAT_BREAKER_THRESHOLD: '1000' }, { db, clock });
      tight = await buildTestApp(
        { ...env, OPENVAT_BREAKER_THRESHOLD: '2', OPENVAT_BREAKER_OPEN_MS: '60000' },
        { db, clock },
      );
      key = await t.key('pro', 'live');
      tightKey = await tight.key('pro', 'live');
    });
    beforeEach(() => {
      sml.control({ reset: true });
      smp.control({ smp: { reset: true } });
    });
    after(async () => {
      await tight.app.close();
      await t.close();
      await db.dispose();
      await sml.close();
      await smp.close();
    });

    const lookup = (identifier: string, app = t, k = key) =>
      app.app.inject({
        method: 'GET',
        url: `/v1/peppol/${encodeURIComponent(identifier)}?cache=false`,
        headers: k.headers,
      });
    const status = async (app: TestApp) =>
      (await app.app.inject({ method: 'GET', url: '/v1/status' })).json().data.peppol;

    it('one derived identifier failing leaves the others answered: that participant is unknown, not "not registered"', async () => {
      sml.control({ failFor: { '9925:be0999000030': 'servfail' } });
      const response = await lookup('BE0999000030');
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json();
      assert.equal(body.data.reachable, true);
      assert.equal(body.data.can_receive_invoices, true, 'the enterprise number lists invoices');
      const [enterprise, vat] = body.data.participants as [Participant, Participant];
      assert.equal(enterprise.sml_status, 'ok');
      assert.equal(enterprise.sml_error, null);
      assert.equal(enterprise.registered, true);
      assert.equal(vat.id, '9925:be0999000030');
      assert.equal(vat.registered, null);
      assert.equal(vat.sml_status, 'unavailable');
      assert.match(vat.sml_error ?? '', /SERVFAIL/);
      assert.equal(vat.smp_status, null);
      assert.equal(body.meta.source_status, 'degraded');
    });

    it('a stored registered participant without invoices next to an unknown one: can_receive_invoices is null', async () => {
      // Only the organisation number is stored; the SML then fails for every name.
      assert.equal((await lookup('0192:999000002')).statusCode, 200);
      sml.control({ fail: 'servfail' });
      const response = await lookup('NO999000002');
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json();
      assert.equal(body.data.reachable, true);
      assert.equal(body.data.can_receive_invoices, null, 'the unknown one might take invoices');
      const [stored, unknown] = body.data.participants as [Participant, Participant];
      assert.equal(stored.id, '0192:999000002');
      assert.equal(stored.sml_status, 'ok');
      assert.equal(unknown.sml_status, 'unavailable');
      assert.equal(unknown.registered, null);
      assert.equal(body.meta.source_status, 'degraded');
    });

    it('no participant known to be registered and one unknown: 502, never reachable false', async () => {
      assert.equal((await lookup('9930:de100000008')).json().data.reachable, false);
      sml.control({ fail: 'servfail' });
      const response = await lookup('DE100000008');
      assert.equal(response.statusCode, 502, response.body);
      assert.equal(response.json().error.code, 'registry_unavailable');
      assert.equal(response.headers['retry-after'], '30');
    });

    it('the SML breaker opens after repeated failures: no DNS query while open, a trial after, shown in /v1/status', async () => {
      // The Austrian participant's name answers SERVFAIL, and nothing of it is stored.
      for (let i = 0; i < 2; i++)
        assert.equal((await lookup('9914:atu99990019', tight, tightKey)).statusCode, 502);
      const queries = dnsQueries(sml);
      const refused = await lookup('0184:99900008', tight, tightKey);
      assert.equal(refused.statusCode, 502);
      assert.match(refused.json().error.message, /circuit open/);
      const stored = await lookup('0208:0999000030', tight, tightKey);
      assert.equal(stored.statusCode, 200, 'a stored answer is served while the breaker is open');
      assert.equal(stored.json().meta.source_status, 'degraded');
      assert.equal(dnsQueries(sml), queries, 'no DNS query while the breaker is open');
      const open = await status(tight);
      assert.equal(open.sml_breaker, 'open');
      assert.equal(open.sml_retry_after_seconds, 60);
      clock.advance(61_000);
      const trial = await lookup('0208:0999000030', tight, tightKey);
      assert.equal(trial.statusCode, 200, trial.body);
      assert.ok(dnsQueries(sml) > queries);
      clock.advance(3_000);
      assert.equal((await status(tight)).sml_breaker, 'closed');
    });

    it('an SMP host’s breaker opens after repeated failures: it is sent nothing, the SML is still asked', async () => {
      smp.control({ smp: { down: ['invoices'] } });
      for (let i = 0; i < 2; i++) {
        const body = (await lookup('9930:de999000009', tight, tightKey)).json();
        assert.equal(body.data.participants[0].smp_status, 'unavailable');
      }
      const calls = smpCalls(smp);
      const queries = dnsQueries(sml);
      const body = (await lookup('9930:de999000009', tight, tightKey)).json();
      assert.equal(body.data.participants[0].registered, true);
      assert.equal(body.data.participants[0].smp_status, 'unavailable');
      assert.equal(body.data.can_receive_invoices, null);
      assert.equal(smpCalls(smp), calls, 'no request to the SMP while its breaker is open');
      assert.ok(dnsQueries(sml) > queries, 'the SML is asked');
      clock.advance(3_000);
      const shown = await status(tight);
      assert.equal(shown.sml_breaker, 'closed');
      assert.deepEqual(
        shown.smp_breakers.map((b: { host: string; breaker: string }) => [b.host, b.breaker]),
        [[smpHost, 'open']],
      );
      // The other instance's breakers are its own (no Redis here): it still asks the SMP.
      const elsewhere = (await lookup('9930:de999000009')).json();
      assert.equal(elsewhere.data.participants[0].smp_status, 'unavailable');
      assert.ok(smpCalls(smp) > calls);
      clock.advance(61_000);
    });
  });
}
