import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEvatrClient } from '../../src/registries/evatr.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { type RunningServer, startScriptedServer } from './evatr/helpers.js';

/** The authority's request id, far longer than any it sends today. */
const LONG_ID = `${'0123456789abcdef'.repeat(18)}${'x'.repeat(12)}`;

for (const target of await databaseTargets()) {
  describe(`what the authority returns is stored whatever its length (${target.name})`, {
    skip: target.skip,
  }, () => {
    let db: TestDb;
    let t: TestApp;
    let server: RunningServer;

    before(async () => {
      db = await target.open();
      server = await startScriptedServer((_exchange, res) => {
        const text = JSON.stringify({
          id: LONG_ID,
          anfrageZeitpunkt: '2026-11-27T10:01:02.123456789+01:00',
          status: 'evatr-0000',
          ergFirmenname: 'A',
          ergOrt: 'A',
        });
        res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
        res.end(text);
      });
      t = await buildTestApp({}, { db, evatr: createEvatrClient({ baseUrl: server.url, timeoutMs: 5_000 }) });
    });
    after(async () => {
      await t?.close();
      await server?.close();
      await db?.dispose();
    });

    it('a confirmation whose eVatR id has 300 characters is answered, stored and served', async () => {
      assert.equal(LONG_ID.length, 300);
      const key = await t.key('business', 'live', { defaultRequesterVat: 'DE136695976' });
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/confirm',
        headers: key.headers,
        payload: { vat_number: 'ATU12345678', company: { name: 'Beispiel GmbH', town: 'Wien' } },
      });
      assert.equal(res.statusCode, 200, res.body);
      const confirmed = res.json() as { data: { confirmation_id: string }; meta: { taxauth_id: string } };
      assert.equal(confirmed.meta.taxauth_id, LONG_ID);

      const stored = await t.app.inject({
        method: 'GET',
        url: `/v1/confirmations/${confirmed.data.confirmation_id}`,
        headers: key.headers,
      });
      assert.equal(stored.statusCode, 200, stored.body);
      const record = stored.json() as { data: { taxauth_id: string; taxauth: { id: string } } };
      assert.equal(record.data.taxauth_id, LONG_ID);
      assert.equal(record.data.taxauth.id, LONG_ID);
      const report = await t.container.confirmations.verifyChain();
      assert.equal(report.ok, true);
      assert.equal(report.ok && report.count, 1);
    });
  });
}
