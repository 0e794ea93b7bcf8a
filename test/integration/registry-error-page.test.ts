import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { createManualClock } from '../../src/lib/clock.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { type FixtureServer, fixture, startFixtureServer } from './registries/helpers.js';

/**
 * A proxy or a moved endpoint in front of Brønnøysund answers every unit with its own HTML 404
 * page. That is not the register saying the unit does not exist: the number is unavailable, nothing
 * is stored as invalid, and a monitor of the number sees no change.
 */
const ORGNR = '923609016';
const VAT = `NO${ORGNR}MVA`;
const NOW = '2026-11-26T09:00:00.000Z';
const HTML_404 =
  '<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>' +
  '<body><h1>Not Found</h1><hr><address>nginx</address></body></html>';

for (const target of await databaseTargets()) {
  describe(`an HTML 404 in front of Brønnøysund, on ${target.name}`, { skip: target.skip }, () => {
    let brreg: FixtureServer;
    let errorPage = true;
    let db: TestDb;
    let t: TestApp;
    let live: TestKey;
    const clock = createManualClock(NOW);

    before(async () => {
      brreg = await startFixtureServer(() =>
        errorPage
          ? { status: 404, body: HTML_404, headers: { 'content-type': 'text/html' } }
          : { status: 200, body: fixture('brreg/enhet-vat.json').replaceAll('995525828', ORGNR) },
      );
    });
    after(() => brreg.close());
    beforeEach(async () => {
      db = await target.open();
      const shared: Db = { ...db, close: async () => {} };
      clock.set(NOW);
      errorPage = true;
      t = await buildTestApp(
        {
          BRREG_URL: brreg.url,
          OPENVAT_STATUS_POLL_MS: '0',
          OPENVAT_REGISTRY_BACKOFF_MS: '1',
        },
        { db: shared, clock },
      );
      live = await t.key('business', 'live');
    });
    afterEach(async () => {
      await t.close();
      await db.dispose();
    });

    const storedAnswers = () =>
      db.kysely
        .selectFrom('registry_answers')
        .selectAll()
        .where('vat_number', 'like', `%${ORGNR}%`)
        .execute();

    it('validate answers registry_unavailable, not valid:false, and stores no answer', async () => {
      for (let attempt = 0; attempt < 2; attempt++) {
        const res = await t.app.inject({
          method: 'GET',
          url: `/v1/validate?vat_number=${VAT}`,
          headers: live.headers,
        });
        assert.ok(res.statusCode === 502 || res.statusCode === 503, res.body);
        assert.equal(res.json().error.code, 'registry_unavailable', res.body);
        assert.deepEqual(await storedAnswers(), [], 'nothing is stored as invalid');
      }
      assert.ok(brreg.requests.some((request) => request.url === `/enhetsregisteret/api/enheter/${ORGNR}`));
    });

    it('a monitor of a registered number reports no change and stays valid', async () => {
      errorPage = false;
      const created = await t.app.inject({
        method: 'POST',
        url: '/v1/monitors',
        headers: live.headers,
        payload: { vat_number: VAT, interval: 'daily' },
      });
      assert.equal(created.statusCode, 201, created.body);
      const id = created.json().data.monitor.id as string;
      assert.equal(created.json().data.monitor.status, 'valid');

      errorPage = true;
      clock.advance(2 * 86_400_000);
      await t.app.inject({ method: 'POST', url: `/v1/monitors/${id}/check`, headers: live.headers });
      const view = await t.app.inject({ method: 'GET', url: `/v1/monitors/${id}`, headers: live.headers });
      assert.equal(view.statusCode, 200, view.body);
      const data = view.json().data;
      assert.deepEqual(data.changes, [], 'no became_invalid');
      assert.equal(data.monitor.status, 'valid');
      assert.equal(data.checks[0].outcome, 'unavailable', JSON.stringify(data.checks[0]));
      const changes = await db.kysely
        .selectFrom('monitor_changes')
        .select('kind')
        .where('monitor_id', '=', id)
        .execute();
      assert.deepEqual(changes, []);
      assert.deepEqual(
        (await storedAnswers()).map((row) => Number(row.valid)),
        [1],
        'the stored answer stays the valid one',
      );
    });
  });
}
