import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { createManualClock } from '../../src/lib/clock.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { type FixtureServer, startFixtureServer } from './registries/helpers.js';

/**
 * A registry that sends text no client should get: a NUL (which PostgreSQL cannot store), a bell,
 * a right-to-left override that would make a name display as other text, a lone surrogate, CR LF
 * line breaks and tabs; and a request date decades ahead.
 */
const HOSTILE_NAME = 'Evil\u0000Corp\u0007 \u202eLtd\ud800';
const HOSTILE_ADDRESS = 'Line 1\r\n\tLine\u00002\u2066';
const NOW = '2026-11-26T09:00:00.000Z';

function viesAnswer(body: string): Record<string, unknown> {
  const { countryCode, vatNumber } = JSON.parse(body) as { countryCode: string; vatNumber: string };
  return {
    countryCode,
    vatNumber,
    requestDate: '2099-01-01T00:00:00.000Z',
    valid: true,
    name: HOSTILE_NAME,
    address: HOSTILE_ADDRESS,
  };
}

for (const target of await databaseTargets()) {
  describe(`text and dates a registry sends, on ${target.name}`, { skip: target.skip }, () => {
    let vies: FixtureServer;
    let db: TestDb;
    let t: TestApp;
    let live: TestKey;
    const clock = createManualClock(NOW);

    before(async () => {
      vies = await startFixtureServer((request) => ({
        status: 200,
        body: JSON.stringify(viesAnswer(request.body)),
        headers: { 'content-type': 'application/json' },
      }));
    });
    after(async () => {
      await vies.close();
    });
    beforeEach(async () => {
      db = await target.open();
      const shared: Db = { ...db, close: async () => {} };
      clock.set(NOW);
      t = await buildTestApp(
        {
          VIES_URL: `${vies.url}/rest-api`,
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

    const expectedName = 'EvilCorp Ltd\ufffd';
    const expectedAddress = 'Line 1\n Line2';

    it('validate answers the text cleaned, stores it and its audit record, and dates it when it arrived', async () => {
      const res = await t.app.inject({
        method: 'GET',
        url: '/v1/validate?vat_number=FR40303265045',
        headers: live.headers,
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.deepEqual(body.data.company, { name: expectedName, address: expectedAddress });
      assert.equal(body.data.verified_at, NOW, 'a date decades ahead is not taken as the time of the check');

      const audit = await t.app.inject({
        method: 'GET',
        url: `/v1/audits/${body.meta.request_id}`,
        headers: live.headers,
      });
      assert.equal(audit.statusCode, 200, audit.body);
      assert.equal(audit.json().data.response.data.company.name, expectedName);

      // Served again from the stored answer, which is as clean, and ages from when it arrived.
      clock.advance(60_000);
      const again = (
        await t.app.inject({
          method: 'GET',
          url: '/v1/validate?vat_number=FR40303265045',
          headers: live.headers,
        })
      ).json();
      assert.equal(again.meta.cached, true);
      assert.equal(again.data.company.name, expectedName);
      assert.equal(again.meta.cached_at, NOW);
    });

    it('decide, a synchronous batch and a monitor take the same clean text', async () => {
      const decided = await t.app.inject({
        method: 'POST',
        url: '/v1/decide',
        headers: live.headers,
        payload: { seller_vat: 'DE136308783', buyer_vat: 'FR40303265045', supply_type: 'services' },
      });
      assert.equal(decided.statusCode, 200, decided.body);
      assert.equal(decided.json().data.mechanism, 'reverse_charge');

      const batch = await t.app.inject({
        method: 'POST',
        url: '/v1/validate/batch',
        headers: live.headers,
        payload: { vat_numbers: ['NL004495445B01', 'IT00743110157'] },
      });
      assert.equal(batch.statusCode, 200, batch.body);
      for (const item of batch.json().data.results) {
        assert.equal(item.ok, true, JSON.stringify(item));
        assert.equal(item.data.company.name, expectedName);
      }

      const monitor = await t.app.inject({
        method: 'POST',
        url: '/v1/monitors',
        headers: live.headers,
        payload: { vat_number: 'BE0403170701', interval: 'daily' },
      });
      assert.equal(monitor.statusCode, 201, monitor.body);
      const created = monitor.json().data;
      assert.equal(created.monitor.status, 'valid');
      assert.deepEqual(created.monitor.company, { name: expectedName, address: expectedAddress });
      assert.equal(created.check.outcome, 'valid');
    });
  });
}
