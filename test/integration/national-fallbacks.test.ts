import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { CZ_ADIS_NUMBERS } from '../../src/simulators/cz-adis.js';
import { FI_PRH_NUMBERS } from '../../src/simulators/fi-prh.js';
import { LV_VID_NUMBERS } from '../../src/simulators/lv-vid.js';
import { PL_WHITELIST_NUMBERS } from '../../src/simulators/pl-whitelist.js';
import { RO_ANAF_NUMBERS } from '../../src/simulators/ro-anaf.js';
import {
  createSimulatorServer,
  type SimulatorServer,
  type SimulatorUrls,
} from '../../src/simulators/server.js';
import { SI_FURS_NUMBERS } from '../../src/simulators/si-furs.js';
import { SK_FINANCNASPRAVA_NUMBERS } from '../../src/simulators/sk-financnasprava.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

/**
 * VIES answers MS_UNAVAILABLE for a member state: the state's own register answers instead, through
 * the real HTTP stack against the simulators, and says so; a register that cannot answer either
 * never turns into `valid: false`; a decision on a register's answer never reverse-charges.
 */
const first = (table: Readonly<Record<string, string>>, outcome: string) => {
  const found = Object.entries(table).find(([, value]) => value === outcome)?.[0];
  assert.ok(found, `a documented number answering ${outcome}`);
  return found;
};

const REGISTERED: { vat: string; source: string; status: string | null }[] = [
  { vat: `PL${first(PL_WHITELIST_NUMBERS, 'Czynny')}`, source: 'pl_whitelist', status: 'Czynny' },
  { vat: `CZ${first(CZ_ADIS_NUMBERS, 'NE')}`, source: 'cz_adis', status: 'NE' },
  { vat: `RO${first(RO_ANAF_NUMBERS, 'registered')}`, source: 'ro_anaf', status: null },
  { vat: `FI${first(FI_PRH_NUMBERS, 'vat_registered')}`, source: 'fi_prh', status: null },
  { vat: `SK${first(SK_FINANCNASPRAVA_NUMBERS, 'registered')}`, source: 'sk_financnasprava', status: null },
  { vat: `SI${first(SI_FURS_NUMBERS, 'po_vat')}`, source: 'si_furs', status: null },
  { vat: `LV${first(LV_VID_NUMBERS, 'active')}`, source: 'lv_vid', status: null },
];
const STATES = REGISTERED.map((entry) => entry.vat.slice(0, 2));

for (const target of await databaseTargets()) {
  describe(`national registers when VIES is down, on ${target.name}`, { skip: target.skip }, () => {
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
      sim.control({ vies: { down: STATES } });
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

    const validate = (vat: string) =>
      t.app.inject({ method: 'GET', url: `/v1/validate?vat_number=${vat}`, headers: live.headers });
    const stored = () => db.kysely.selectFrom('registry_answers').selectAll().execute();

    for (const entry of REGISTERED) {
      it(`${entry.vat.slice(0, 2)}: answered by ${entry.source} with source_status fallback`, async () => {
        const res = await validate(entry.vat);
        assert.equal(res.statusCode, 200, res.body);
        const body = res.json();
        assert.equal(body.data.valid, true, res.body);
        assert.equal(body.data.registration_scope, 'domestic');
        assert.equal(body.data.verify_id, null);
        assert.equal(body.meta.source, entry.source);
        assert.equal(body.meta.source_status, 'fallback');
        assert.equal(body.meta.cached, false);
        assert.equal(body.meta.fallback.reason, 'MS_UNAVAILABLE');
        assert.ok(Date.parse(body.meta.fallback.checked_at) > 0);
        if (entry.status) assert.equal(body.meta.fallback.register_status, entry.status);
        const fileRegister = entry.source === 'si_furs' || entry.source === 'lv_vid';
        assert.equal(typeof body.meta.fallback.data_date, fileRegister ? 'string' : 'object');
        assert.deepEqual(await stored(), [], "a register's answer is never stored as VIES's");
        const audits = await db.kysely.selectFrom('audits').select('response').execute();
        assert.equal(audits.length, 1);
        const recorded = JSON.parse(audits[0]?.response ?? '{}');
        assert.equal(recorded.meta.source, entry.source, 'the audit record keeps the register');
        assert.deepEqual(recorded.meta.fallback, body.meta.fallback);
      });
    }

    it('the Polish white list keeps its requestId as the consultation number', async () => {
      const res = await validate(REGISTERED[0]?.vat ?? '');
      const fallback = res.json().meta.fallback;
      assert.ok(fallback.consultation_number, res.body);
      assert.equal(fallback.identifiers.requestId, fallback.consultation_number);
    });

    const htmlPage = (country: string, code: string) => ({ errorRate: { [country]: { rate: 1, code } } });
    for (const failure of [
      {
        name: 'down (HTML 503)',
        pl: { serviceDown: true },
        cz: { serviceDown: true },
        fi: { serviceDown: true },
      },
      { name: 'hanging', pl: { hang: true }, cz: { hang: true }, fi: { hang: true } },
      {
        name: 'answering an HTML page',
        pl: htmlPage('PL', 'HTML_500'),
        cz: htmlPage('CZ', 'HTML_503'),
        fi: htmlPage('FI', 'HTML_503'),
      },
    ]) {
      it(`a register ${failure.name} never becomes valid:false`, async () => {
        sim.control({ pl: failure.pl, cz: failure.cz, fi: failure.fi });
        // At once: a hanging register costs each its timeout, not one after another.
        const entries = REGISTERED.filter((e) => ['pl_whitelist', 'cz_adis', 'fi_prh'].includes(e.source));
        const answers = await Promise.all(entries.map((entry) => validate(entry.vat)));
        for (const [i, res] of answers.entries()) {
          assert.equal(res.statusCode, 502, `${entries[i]?.vat}: ${res.body}`);
          assert.equal(res.json().error.code, 'registry_unavailable');
        }
        assert.deepEqual(await stored(), []);
      });
    }

    for (const entry of REGISTERED) {
      it(`${entry.vat.slice(0, 2)}: a decision on ${entry.source}'s answer does not reverse-charge`, async () => {
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/decide',
          headers: { ...live.headers, 'content-type': 'application/json' },
          payload: { seller_vat: 'DE136695976', buyer_vat: entry.vat, supply_type: 'services' },
        });
        assert.notEqual(res.statusCode, 200, res.body);
        const error = res.json().error;
        assert.equal(error.code, 'registry_unavailable', res.body);
        assert.match(error.message, /no reverse charge/);
        assert.equal(error.details.register.source, entry.source);
        assert.equal(error.details.register.registration_scope, 'domestic');
        assert.equal(error.details.register.valid, true);
      });
    }

    it('GET /v1/status lists each register with its breaker and last answer', async () => {
      await validate(REGISTERED[0]?.vat ?? '');
      const res = await t.app.inject({ method: 'GET', url: '/v1/status' });
      assert.equal(res.statusCode, 200, res.body);
      const registers = res.json().data.national_registers as {
        source: string;
        last_answer_at: string | null;
        data_date: string | null;
      }[];
      assert.deepEqual(registers.map((r) => r.source).sort(), REGISTERED.map((e) => e.source).sort());
      assert.ok(registers.find((r) => r.source === 'pl_whitelist')?.last_answer_at);
      assert.ok(registers.find((r) => r.source === 'si_furs')?.data_date);
    });
  });
}
