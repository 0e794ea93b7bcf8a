import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { SML_ZONES, smlName } from '../../src/registries/peppol-sml.js';
import { DOCUMENT_TYPES } from '../../src/simulators/peppol-participants.js';
import { createPeppolSmlSimulator, type PeppolSmlSimulator } from '../../src/simulators/peppol-sml.js';
import { createPeppolSmpSimulator, HOSTILE_BODY_BYTES } from '../../src/simulators/peppol-smp.js';
import { type SimulatorServer, serveSimulators } from '../../src/simulators/server.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

const ZONE = SML_ZONES.peppolProduction;
const HOUR_MS = 3_600_000;

interface Participant {
  id: string;
  registered: boolean;
  smp_url: string | null;
  smp_status: string | null;
  document_types: { id: string; name: string | null; invoice: boolean }[] | null;
  business_card: { name: string; country_code: string | null } | null;
}

/** How often the SML simulator was asked a participant's hashed name. */
function asked(sml: PeppolSmlSimulator, participantId: string): number {
  const name = smlName(participantId, ZONE);
  return (sml.stats() as { names: string[] }).names.filter((n) => n === name).length;
}

const smpCalls = (smp: SimulatorServer) => (smp.stats().smp as { total: number }).total;

for (const target of await databaseTargets()) {
  describe(`GET /v1/peppol/{identifier} against the SML and SMP simulators on ${target.name}`, {
    skip: target.skip,
  }, () => {
    let smp: SimulatorServer;
    let sml: PeppolSmlSimulator;
    let db: TestDb;
    let t: TestApp;
    let guarded: TestApp;
    let live: TestKey;
    let guardedKey: TestKey;
    let smpBase: string;
    const clock = createManualClock('2026-12-02T10:00:00.000Z');

    before(async () => {
      smp = serveSimulators({ smp: createPeppolSmpSimulator() });
      const { base } = await smp.listen(0);
      smpBase = `${base}/peppol-smp`;
      sml = createPeppolSmlSimulator({ smpBase });
      const dns = await sml.listen(0, '127.0.0.1');
      db = await target.open();
      const env = {
        PEPPOL_SML_ZONE: ZONE,
        PEPPOL_DNS_SERVERS: `127.0.0.1:${dns.port}`,
        PEPPOL_DNS_TIMEOUT_MS: '300',
        PEPPOL_SMP_TIMEOUT_MS: '3000',
        OPENVAT_RATE_LIMIT_PRO: '100000',
      };
      t = await buildTestApp({ ...env, PEPPOL_ALLOW_PRIVATE_SMP: 'true' }, { db, clock });
      // The same database, with SMP addresses guarded as in production.
      guarded = await buildTestApp(env, { db, clock });
      live = await t.key('pro', 'live');
      guardedKey = await guarded.key('pro', 'live');
    });
    beforeEach(() => {
      sml.control({ reset: true });
      smp.control({ smp: { reset: true } });
    });
    after(async () => {
      await guarded.app.close();
      await t.close();
      await db.dispose();
      await sml.close();
      await smp.close();
    });

    const lookup = (identifier: string, query = '', app: TestApp = t, key: TestKey = live) =>
      app.app.inject({
        method: 'GET',
        url: `/v1/peppol/${encodeURIComponent(identifier)}${query}`,
        headers: key.headers,
      });

    it('derives 0208 and 9925 from a Belgian VAT number, asks their hashed names and reads the SMP', async () => {
      const response = await lookup('be 0999.000.030');
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json();
      assert.equal(body.data.identifier, 'BE0999000030');
      assert.equal(body.data.reachable, true);
      assert.equal(body.data.can_receive_invoices, true);
      const ids = body.data.participants.map((p: Participant) => p.id);
      assert.deepEqual(ids, ['0208:0999000030', '9925:be0999000030']);
      assert.equal(asked(sml, '0208:0999000030'), 1);
      assert.equal(asked(sml, '9925:be0999000030'), 1);
      const enterprise = body.data.participants[0] as Participant;
      assert.equal(enterprise.registered, true);
      assert.equal(enterprise.smp_url, `${smpBase}/invoices`);
      assert.equal(enterprise.smp_status, 'ok');
      assert.deepEqual(
        enterprise.document_types?.map((d) => [d.id, d.invoice]),
        [
          [DOCUMENT_TYPES.bisInvoice, true],
          [DOCUMENT_TYPES.bisCreditNote, false],
          [DOCUMENT_TYPES.bisCiiInvoice, true],
        ],
      );
      assert.equal(enterprise.document_types?.[0]?.name, 'Peppol BIS Billing UBL Invoice V3');
      assert.deepEqual(enterprise.business_card, { name: 'Nordlicht Trading BV', country_code: 'BE' });
      assert.deepEqual(
        { ...body.meta, request_id: undefined, latency_ms: undefined },
        {
          request_id: undefined,
          latency_ms: undefined,
          cached: false,
          source: 'peppol',
          source_status: 'live',
          cached_at: null,
          stale_seconds: null,
        },
      );
    });

    it('a participant identifier, with or without its scheme, asks that one name only', async () => {
      const plain = (await lookup('9930:DE999000009')).json();
      assert.equal(plain.data.identifier, 'iso6523-actorid-upis::9930:de999000009');
      assert.equal(plain.data.participants.length, 1);
      assert.equal(plain.data.can_receive_invoices, true, 'XRechnung is a CIUS of EN 16931');
      const schemed = await lookup('ISO6523-ACTORID-UPIS::9930:de999000009', '?cache=false');
      assert.equal(schemed.statusCode, 200);
      assert.equal(asked(sml, '9930:de999000009'), 2);
      assert.equal(asked(sml, '0246:de999000009'), 0);
    });

    it('answers from the store within the TTL, asks again after it and with cache=false', async () => {
      const first = (await lookup('NO999000002')).json();
      assert.equal(first.data.can_receive_invoices, false, 'orders and catalogues only');
      const queries = asked(sml, '0192:999000002');
      const calls = smpCalls(smp);
      const second = (await lookup('NO999000002')).json();
      assert.equal(second.meta.cached, true);
      assert.equal(second.meta.source_status, 'cached');
      assert.equal(second.meta.cached_at, first.data.checked_at);
      assert.equal(asked(sml, '0192:999000002'), queries, 'no DNS query');
      assert.equal(smpCalls(smp), calls, 'no SMP request');
      clock.advance(HOUR_MS + 1_000);
      const expired = (await lookup('NO999000002')).json();
      assert.equal(expired.meta.cached, false);
      assert.equal(asked(sml, '0192:999000002'), queries + 1);
      const forced = (await lookup('NO999000002', '?cache=false')).json();
      assert.equal(forced.meta.source_status, 'live');
      assert.equal(asked(sml, '0192:999000002'), queries + 2);
    });

    it('NXDOMAIN and NODATA are not registered; a record without Meta:SMP is registered without an SMP', async () => {
      const nothing = (await lookup('DE100000008')).json();
      assert.equal(nothing.data.reachable, false);
      assert.equal(nothing.data.can_receive_invoices, false);
      assert.deepEqual(
        nothing.data.participants.map((p: Participant) => [p.id, p.registered, p.smp_status]),
        [
          ['9930:de100000008', false, null],
          ['0246:de100000008', false, null],
        ],
      );
      const nodata = (await lookup('9910:hu99900009')).json();
      assert.equal(nodata.data.participants[0].registered, false);
      const misconfigured = (await lookup('0184:99900008')).json();
      assert.equal(misconfigured.data.reachable, true);
      assert.equal(misconfigured.data.participants[0].smp_status, 'no_smp');
      assert.equal(misconfigured.data.can_receive_invoices, null);
    });

    it('SERVFAIL, REFUSED and a timeout without a stored answer are 502 with Retry-After, never "not registered"', async () => {
      for (const identifier of ['ATU99990019', 'PL9990000008', 'PT999000004']) {
        const response = await lookup(identifier);
        assert.equal(response.statusCode, 502, `${identifier}: ${response.body}`);
        assert.equal(response.json().error.code, 'registry_unavailable');
        assert.equal(response.json().error.details.source, 'peppol');
        assert.equal(response.headers['retry-after'], '30');
      }
      // Nothing was stored: the next look-up asks again.
      const before = asked(sml, '9914:atu99990019');
      await lookup('ATU99990019');
      assert.ok(asked(sml, '9914:atu99990019') > before);
    });

    it('serves the stored answer, degraded, when the SML fails after it was stored', async () => {
      const fresh = (await lookup('0208:0999000030', '?cache=false')).json();
      assert.equal(fresh.meta.source_status, 'live');
      clock.advance(2 * HOUR_MS);
      sml.control({ fail: 'servfail' });
      const degraded = await lookup('0208:0999000030');
      assert.equal(degraded.statusCode, 200, degraded.body);
      const body = degraded.json();
      assert.equal(body.meta.source_status, 'degraded');
      assert.equal(body.meta.cached, true);
      assert.equal(body.meta.cached_at, fresh.data.checked_at);
      assert.equal(body.meta.stale_seconds, 7_200);
      assert.equal(body.data.reachable, true);
      assert.equal(body.data.participants[0].smp_status, 'ok');
      sml.control({ fail: 'no_answer' });
      const timedOut = (await lookup('0208:0999000030', '?cache=false')).json();
      assert.equal(timedOut.meta.source_status, 'degraded');
    });

    it('an SMP that fails, bombs or floods leaves the participant registered with smp_status unavailable', async () => {
      for (const identifier of ['NL999000001B01', 'FI99900008', 'SE999000000301']) {
        const response = await lookup(identifier);
        assert.equal(response.statusCode, 200, `${identifier}: ${response.body}`);
        const registered = (response.json().data.participants as Participant[]).filter((p) => p.registered);
        assert.equal(registered.length, 1, identifier);
        assert.equal(registered[0]?.smp_status, 'unavailable', identifier);
        assert.equal(registered[0]?.document_types, null);
        assert.equal(response.json().data.can_receive_invoices, null, identifier);
      }
      const hostile = (smp.stats().smp as { hostile: { bytesSent: number } }).hostile;
      assert.ok(hostile.bytesSent < HOSTILE_BODY_BYTES / 2, `read ${hostile.bytesSent} bytes of 50 MB`);
      const unknown = (await lookup('9920:esb99900003')).json();
      assert.equal(unknown.data.participants[0].smp_status, 'not_found');
      assert.deepEqual(unknown.data.participants[0].document_types, []);
      assert.equal(unknown.data.can_receive_invoices, false);
    });

    it('reads an SML answer too large for UDP over TCP', async () => {
      const body = (await lookup('0211:it99900000011')).json();
      assert.equal(body.data.participants[0].smp_status, 'ok');
      assert.equal(body.data.can_receive_invoices, true);
      assert.ok((sml.stats() as { tcp: number }).tcp >= 1);
    });

    it('concurrent look-ups of one identifier share one DNS query and one SMP request', async () => {
      sml.control({ latencyMs: 200 });
      const calls = smpCalls(smp);
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => lookup('9930:de999000009', '?cache=false')),
      );
      for (const answer of answers) assert.equal(answer.statusCode, 200);
      assert.equal(asked(sml, '9930:de999000009'), 1);
      assert.equal(smpCalls(smp) - calls, 2, 'one ServiceGroup and one business card');
    });

    it('refuses an SMP at a private address or over plain http without sending it anything', async () => {
      const calls = smpCalls(smp);
      const french = (await lookup('FR42999000003', '?cache=false', guarded, guardedKey)).json();
      const siren = (french.data.participants as Participant[]).find((p) => p.id === '0002:999000003');
      assert.equal(siren?.registered, true);
      assert.equal(siren?.smp_status, 'refused');
      assert.equal(siren?.smp_url, 'https://10.0.0.1/smp');
      const belgian = (await lookup('0208:0999000030', '?cache=false', guarded, guardedKey)).json();
      assert.equal(belgian.data.participants[0].smp_status, 'refused', 'http://127.0.0.1 is refused');
      assert.equal(belgian.data.can_receive_invoices, null);
      assert.equal(smpCalls(smp), calls, 'no request reached an SMP');
    });

    it('records the answer for GET /v1/audits/{request_id}, as validate does', async () => {
      const response = await lookup('BE0999000030');
      const requestId = response.json().meta.request_id as string;
      const audit = await t.app.inject({
        method: 'GET',
        url: `/v1/audits/${requestId}`,
        headers: live.headers,
      });
      assert.equal(audit.statusCode, 200, audit.body);
      assert.equal(audit.json().data.endpoint, 'peppol');
      assert.deepEqual(audit.json().data.response, response.json());
    });
  });
}
