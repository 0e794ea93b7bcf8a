import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { verifyWebhook } from '../../src/modules/webhooks/verify.js';
import { createTedbClient } from '../../src/registries/tedb.js';
import { recordedTedb, recordedTedbAnswer } from '../fakes/tedb-recorded.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { type FixtureServer, startFixtureServer } from './registries/helpers.js';

interface Period {
  from: string;
  to: string | null;
}

/**
 * The shipped dataset as it was before Estonia's 22% of 2024-01-01 was known: its periods from then
 * on left out, the one before open-ended.
 */
function datasetBeforeEstonia2024(): string {
  const dataset = JSON.parse(readFileSync(new URL('../../data/rates.json', import.meta.url), 'utf8')) as {
    countries: { country_code: string; periods: Period[] }[];
  };
  const ee = dataset.countries.find((c) => c.country_code === 'ee');
  if (!ee) throw new Error('no Estonia in the dataset');
  ee.periods = ee.periods.filter((p) => p.from < '2024-01-01');
  const last = ee.periods.at(-1);
  if (last) last.to = null;
  return JSON.stringify(dataset);
}

// HMRC's recorded TEDB answer (27 member states and Northern Ireland, 2021 to 2024, with an empty
// additionalInformation), replayed as the service answers each query, on 20 December 2023: Estonia's
// 20% → 22% of 1 January 2024 is an announced change in it.
for (const target of await databaseTargets()) {
  describe(`rates sync against a recorded TEDB answer on ${target.name}`, { skip: target.skip }, () => {
    const clock = createManualClock('2023-12-20T10:00:00Z');
    const tedb = recordedTedb(recordedTedbAnswer('stub-response.xml.gz'));
    let server: FixtureServer;
    let receiver: WebhookReceiver;
    let dir: string;
    let ratesPath: string;
    let db: TestDb;
    let t: TestApp;

    before(async () => {
      server = await startFixtureServer((request) => ({
        status: 200,
        headers: { 'content-type': 'text/xml;charset=UTF-8' },
        body: tedb.answer(request.body),
      }));
      receiver = await startWebhookReceiver();
      dir = mkdtempSync(join(tmpdir(), 'openvat-rates-recorded-'));
      ratesPath = join(dir, 'rates.json');
      writeFileSync(ratesPath, datasetBeforeEstonia2024());
    });
    after(async () => {
      await server.close();
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    });
    beforeEach(async () => {
      clock.set('2023-12-20T10:00:00Z');
      receiver.received.length = 0;
      db = await target.open();
      t = await buildTestApp(
        {
          OPENVAT_TEDB_URL: server.url,
          OPENVAT_RATES_PATH: ratesPath,
          OPENVAT_WEBHOOKS_ALLOW_PRIVATE: 'true',
        },
        {
          clock,
          db: { ...db, close: async () => {} },
          tedb: createTedbClient({ url: server.url, timeoutMs: 30_000 }),
        },
      );
    });
    afterEach(async () => {
      await t.close();
      await db.dispose();
    });

    const rate = async (country: string, date: string) => {
      const res = await t.app.inject({ method: 'GET', url: `/v1/rates/${country}?date=${date}` });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data;
    };

    it("reads the 27 member states from the answer's rows, learns Estonia's announced 22% and sends rates.changed", async () => {
      const key = await t.key('pro', 'live');
      const registered = await t.app.inject({
        method: 'POST',
        url: '/v1/webhooks',
        headers: key.headers,
        payload: { url: `${receiver.origin}/rates`, events: ['rates.changed'] },
      });
      assert.equal(registered.statusCode, 201, registered.body);
      const secret = registered.json().secret as string;

      const list = async (date: string) =>
        (await t.app.inject({ method: 'GET', url: `/v1/rates?date=${date}` })).json().data as {
          country_code: string;
        }[];
      const before = { past: await list('2023-12-19'), today: await list('2023-12-20') };
      const outcome = await t.container.ratesUpdates.syncNow();
      assert.equal(outcome.kind, 'synced', JSON.stringify(outcome));
      // Where TEDB's rows read otherwise than the shipped rates (regional rows without their category,
      // labels, bands of its own), the change is held: only Estonia's announced 22% is applied.
      assert.equal(outcome.kind === 'synced' && outcome.applied, 1);
      const held = await t.container.ratesUpdates.changes(['held']);
      assert.deepEqual(
        [...new Set(held.map((c) => c.country_code))],
        ['at', 'cz', 'es', 'fr', 'gr', 'ie', 'lu', 'mt', 'pt'],
      );
      for (const change of held.filter((c) => c.valid_from < '2023-12-20'))
        assert.match(change.reason ?? '', /before the sync's day \(2023-12-20\)/);
      // No day before the sync's, and not today either, answers otherwise than before it.
      assert.deepEqual(await list('2023-12-19'), before.past);
      assert.deepEqual(await list('2023-12-20'), before.today);
      assert.equal((await rate('ee', '2024-01-01')).standard_rate, 22);
      assert.equal((await rate('ee', '2023-12-31')).standard_rate, 20);

      await t.container.webhookWorker.drain();
      const events = receiver.received.map((r) => {
        assert.ok(
          verifyWebhook({
            secret,
            headers: r.headers,
            rawBody: r.body,
            now: new Date(Number(r.headers['service-timestamp']) * 1000),
          }).ok,
        );
        const body = JSON.parse(r.body) as {
          event: string;
          data: {
            data: {
              country_code: string;
              status: string;
              effective_from: string;
              before: { standard_rate: number };
              after: { standard_rate: number };
              source: string;
            };
          };
        };
        return { event: body.event, ...body.data.data };
      });
      const estonia = events.filter((e) => e.country_code === 'ee');
      assert.deepEqual(
        estonia.map((e) => [e.event, e.status, e.effective_from, e.source]),
        [['rates.changed', 'announced', '2024-01-01', 'tedb']],
      );
      assert.equal(estonia[0]?.before.standard_rate, 20);
      assert.equal(estonia[0]?.after.standard_rate, 22);
    });
  });
}
