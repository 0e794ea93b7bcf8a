import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { CZ_ADIS_NUMBERS } from '../../src/simulators/cz-adis.js';
import { PL_WHITELIST_NUMBERS } from '../../src/simulators/pl-whitelist.js';
import {
  createSimulatorServer,
  type SimulatorServer,
  type SimulatorUrls,
} from '../../src/simulators/server.js';
import { SI_FURS_NUMBERS } from '../../src/simulators/si-furs.js';
import { SK_FINANCNASPRAVA_NUMBERS } from '../../src/simulators/sk-financnasprava.js';
import { expectedViesAnswer } from '../../src/simulators/vies.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

/**
 * The national registers answer for VIES everywhere a validation happens: batch items (synchronous
 * and jobs) and monitor checks, through the real HTTP stack against the simulators. A monitor
 * records no change from a register's answer alone; audit records and proofs keep the register's
 * answer and identifiers.
 */
const numberOf = (table: Readonly<Record<string, string>>, outcome: string) => {
  const found = Object.entries(table).find(([, value]) => value === outcome)?.[0];
  assert.ok(found, `a documented number answering ${outcome}`);
  return found;
};

const PL_ACTIVE = `PL${numberOf(PL_WHITELIST_NUMBERS, 'Czynny')}`;
const PL_EXEMPT = `PL${numberOf(PL_WHITELIST_NUMBERS, 'Zwolniony')}`;
const CZ_PAYER = `CZ${numberOf(CZ_ADIS_NUMBERS, 'NE')}`;
const SI_PAYER = `SI${numberOf(SI_FURS_NUMBERS, 'po_vat')}`;
const SK_PAYER = `SK${numberOf(SK_FINANCNASPRAVA_NUMBERS, 'registered')}`;

for (const target of await databaseTargets()) {
  describe(`national registers in batches, monitors, audits and proofs, on ${target.name}`, {
    skip: target.skip,
  }, () => {
    let sim: SimulatorServer;
    let urls: SimulatorUrls;
    let db: TestDb;
    let t: TestApp;
    let live: TestKey;

    before(async () => {
      sim = createSimulatorServer();
      ({ urls } = await sim.listen(0, '127.0.0.1'));
    });
    after(() => sim.close());
    beforeEach(async () => {
      sim.control({ all: { reset: true } });
      db = await target.open();
      const shared: Db = { ...db, close: async () => {} };
      t = await buildTestApp(
        {
          ...urls,
          OPENVAT_NATIONAL_FALLBACKS: 'all',
          SK_OPENDATA_KEY: 'test-key',
          OPENVAT_REGISTERS_MIN_ROWS: '1',
          OPENVAT_REGISTERS_SYNC_MS: '0',
          OPENVAT_NATIONAL_TIMEOUT_MS: '3000',
          OPENVAT_STATUS_POLL_MS: '0',
          OPENVAT_REGISTRY_BACKOFF_MS: '1',
          OPENVAT_REGISTRY_DEADLINE_MS: '0',
          OPENVAT_BATCH_RETRY_DEADLINE_MS: '0',
        },
        { db: shared },
      );
      const synced = await t.container.national.syncFiles();
      assert.ok(
        synced.every((result) => result.ok),
        JSON.stringify(synced),
      );
      live = await t.key('business', 'live');
    });
    afterEach(async () => {
      await t.close();
      await db.dispose();
    });

    const post = (url: string, payload: unknown) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { ...live.headers, 'content-type': 'application/json' },
        payload: payload as Record<string, unknown>,
      });
    const get = (url: string) => t.app.inject({ method: 'GET', url, headers: live.headers });

    /** An item answered by the Polish white list for VIES, with its requestId. */
    // biome-ignore lint/suspicious/noExplicitAny: a parsed JSON item
    function assertWhiteListItem(item: Record<string, any>) {
      assert.equal(item.ok, true, JSON.stringify(item));
      assert.equal(item.data.valid, true);
      assert.equal(item.data.registration_scope, 'domestic');
      assert.equal(item.meta.source, 'pl_whitelist');
      assert.equal(item.meta.source_status, 'fallback');
      assert.equal(item.meta.fallback.reason, 'MS_UNAVAILABLE');
      assert.equal(item.meta.fallback.register_status, 'Czynny');
      assert.ok(item.meta.fallback.consultation_number);
      assert.equal(item.meta.fallback.identifiers.requestId, item.meta.fallback.consultation_number);
    }

    it('a batch item is answered by the register when VIES is down for its state', async () => {
      sim.control({ vies: { down: ['PL'] } });
      const res = await post('/v1/validate/batch', { vat_numbers: [PL_ACTIVE, 'DE136695976'] });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assertWhiteListItem(body.data.results[0]);
      assert.equal(body.data.results[1].ok, true);
      assert.equal(body.data.results[1].meta, undefined, 'a VIES answer has no item meta');
      assert.equal(body.data.results[1].data.registration_scope, undefined);
      assert.equal(body.meta.sources.pl_whitelist.fallback, 1);
      assert.equal(body.meta.source_status, 'fallback');
      assert.equal(body.meta.cached, false);
    });

    it('a batch job item is answered by the register when VIES is down for its state', async () => {
      sim.control({ vies: { down: ['PL', 'CZ', 'SK'] } });
      const res = await post('/v1/validate/batch', {
        vat_numbers: [PL_ACTIVE, CZ_PAYER, SK_PAYER],
        async: true,
      });
      assert.equal(res.statusCode, 202, res.body);
      await t.container.batchWorker.drain();
      const got = await get(`/v1/validate/batch/${res.json().data.id}`);
      assert.equal(got.statusCode, 200, got.body);
      const data = got.json().data;
      assert.equal(data.status, 'completed', got.body);
      assertWhiteListItem(data.results[0]);
      assert.equal(data.results[1].meta.source, 'cz_adis');
      assert.equal(data.results[1].meta.fallback.register_status, 'NE');
      assert.equal(data.results[2].meta.source, 'sk_financnasprava');
      assert.deepEqual(data.summary, { total: 3, successful: 3, failed: 0 });
      const completed = await db.kysely
        .selectFrom('events')
        .select('payload')
        .where('type', '=', 'batch.completed')
        .executeTakeFirstOrThrow();
      const meta = JSON.parse(completed.payload).meta;
      assert.equal(meta.sources.sk_financnasprava.fallback, 1, completed.payload);
      assert.equal(meta.source_status, 'fallback');
    });

    it('a monitor check keeps the register answer but records no change from it alone', async () => {
      const vies = expectedViesAnswer('PL', PL_EXEMPT.slice(2));
      assert.ok('valid' in vies && vies.valid, 'VIES lists the number the white list calls Zwolniony');
      const created = await post('/v1/monitors', { vat_number: PL_EXEMPT, interval: 'daily' });
      assert.equal(created.statusCode, 201, created.body);
      const id = created.json().data.monitor.id;
      assert.equal(created.json().data.monitor.status, 'valid');

      sim.control({ vies: { down: ['PL'] } });
      const checked = await post(`/v1/monitors/${id}/check`, {});
      assert.equal(checked.statusCode, 200, checked.body);
      const { check, changes, monitor } = checked.json().data;
      assert.equal(check.outcome, 'invalid', 'the check keeps what the register said');
      assert.equal(check.source, 'pl_whitelist');
      assert.equal(check.source_status, 'fallback');
      assert.match(check.error, /VIES did not answer/);
      assert.deepEqual(changes, []);
      assert.equal(monitor.status, 'valid', 'the monitor keeps its last VIES state');

      const view = await get(`/v1/monitors/${id}`);
      assert.deepEqual(view.json().data.changes, []);
      const events = await db.kysely.selectFrom('events').select('type').execute();
      assert.deepEqual(
        events.filter((e) => e.type === 'vat_number.changed'),
        [],
        'no vat_number.changed from a register answer alone',
      );
      const audit = await get(`/v1/audits/${check.request_id}`);
      assert.equal(audit.statusCode, 200, audit.body);
      const recorded = audit.json().data.response;
      assert.equal(recorded.meta.source, 'pl_whitelist');
      assert.equal(recorded.meta.fallback.register_status, 'Zwolniony');
      assert.ok(recorded.meta.fallback.consultation_number);

      // VIES back: its answer is the monitor's state again, still no change.
      sim.control({ vies: { down: [] } });
      const again = await post(`/v1/monitors/${id}/check`, {});
      assert.equal(again.json().data.check.source_status, 'live', again.body);
      assert.equal(again.json().data.check.outcome, 'valid');
      assert.deepEqual(again.json().data.changes, []);
    });

    void SI_PAYER;
  });
}
