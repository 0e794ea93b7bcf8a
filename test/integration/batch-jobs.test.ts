import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';
import { createManualClock } from '../../src/lib/clock.js';
import {
  createSimulatorServer,
  type SimulatorServer,
  type SimulatorUrls,
} from '../../src/simulators/server.js';
import { expectedViesAnswer } from '../../src/simulators/vies.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { wellFormedNumbers } from '../helpers/batch-numbers.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

function viesCalls(sim: SimulatorServer): number {
  return (sim.stats() as { vies: { total: number } }).vies.total;
}

type Item = { ok: boolean; data?: { vat_number: string; valid: boolean }; error?: { code: string } };

function env(urls: SimulatorUrls, extra: Record<string, string> = {}): Record<string, string> {
  return {
    VIES_URL: urls.VIES_URL,
    VIES_SOAP_URL: urls.VIES_SOAP_URL,
    HMRC_URL: urls.HMRC_URL,
    BFS_URL: urls.BFS_URL,
    BRREG_URL: urls.BRREG_URL,
    OPENVAT_REGISTRY_BACKOFF_MS: '5',
    OPENVAT_REGISTRY_TIMEOUT_MS: '2000',
    OPENVAT_BREAKER_OPEN_MS: '100',
    OPENVAT_BATCH_RETRY_DEADLINE_MS: '60000',
    OPENVAT_BATCH_RETRY_BACKOFF_MS: '1000',
    OPENVAT_BATCH_LEASE_MS: '30000',
    OPENVAT_STATUS_POLL_MS: '0',
    ...extra,
  };
}

for (const target of await databaseTargets()) {
  describe(`batch jobs on ${target.name}`, { skip: target.skip }, () => {
    let sim: SimulatorServer;
    let urls: SimulatorUrls;
    let db: TestDb;
    let t: TestApp;
    let live: TestKey;
    const clock = createManualClock('2026-11-22T12:00:00.000Z');
    /** The database shared by every container of this suite; closed once at the end. */
    let shared: Db;

    before(async () => {
      sim = createSimulatorServer({ latencyMs: 2 });
      ({ urls } = await sim.listen(0, '127.0.0.1'));
      db = await target.open();
      shared = { ...db, close: async () => {} };
      t = await buildTestApp(env(urls), { db: shared, clock });
      live = await t.key('business', 'live');
    });
    afterEach(() => {
      sim.control({ reset: true });
      sim.control({ latencyMs: 2 });
    });
    after(async () => {
      await t.close();
      await db.dispose();
      await sim.close();
    });

    const submit = (key: TestKey, vatNumbers: string[], extra: Record<string, unknown> = {}) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/validate/batch',
        headers: key.headers,
        payload: { vat_numbers: vatNumbers, async: true, ...extra },
      });
    const get = (key: TestKey, id: string) =>
      t.app.inject({ method: 'GET', url: `/v1/validate/batch/${id}`, headers: key.headers });

    it('runs a job to completion: results in input order, duplicates asked once, event and audit recorded', async () => {
      const de = wellFormedNumbers('DE', 10, 100);
      const at = wellFormedNumbers('AT', 10, 100);
      const input = [
        ...de,
        ...at,
        de[0] as string,
        `${(de[1] as string).slice(0, 2)} ${(de[1] as string).slice(2)}`,
        'DE1',
      ];
      const before = viesCalls(sim);
      const res = await submit(live, input);
      assert.equal(res.statusCode, 202, res.body);
      const id = res.json().data.id;
      assert.equal(res.json().data.status, 'queued');
      await t.container.batchWorker.drain();
      assert.equal(viesCalls(sim) - before, 20, 'each distinct number is asked once');

      const got = await get(live, id);
      assert.equal(got.statusCode, 200);
      const data = got.json().data;
      assert.equal(data.status, 'completed');
      assert.equal(data.total, 23);
      assert.equal(data.done, 23);
      assert.equal(data.failed, 1);
      const results = data.results as Item[];
      input.forEach((vat, i) => {
        const item = results[i] as Item;
        if (vat === 'DE1') {
          assert.equal(item.error?.code, 'invalid_format');
          return;
        }
        const normalised = vat.replace(/\s/g, '');
        assert.equal(item.data?.vat_number, normalised);
        const expected = expectedViesAnswer(normalised.slice(0, 2), normalised.slice(2));
        assert.ok('valid' in expected);
        assert.equal(item.data?.valid, expected.valid, normalised);
      });

      const events = await shared.kysely
        .selectFrom('events')
        .selectAll()
        .where('type', '=', 'batch.completed')
        .execute();
      assert.equal(events.length, 1);
      const payload = JSON.parse(events[0]?.payload ?? '{}');
      assert.deepEqual(payload.data.results, data.results);
      assert.deepEqual(payload.data.summary, data.summary);
      assert.deepEqual(data, payload.data, 'a GET answers the data the event and the audit record hold');
      assert.equal(got.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(got.json().meta.request_id, got.headers['service-request-id'], "the GET's own meta");
      assert.notEqual(got.json().meta.request_id, payload.meta.request_id);
      assert.equal(typeof got.json().meta.latency_ms, 'number');
      assert.equal(payload.meta.request_id, res.json().meta.request_id);
      assert.equal(typeof payload.meta.latency_ms, 'number');
      assert.ok(payload.meta.sources.vies.live >= 20);

      const audit = await t.app.inject({
        method: 'GET',
        url: `/v1/audits/${res.json().meta.request_id}`,
        headers: live.headers,
      });
      assert.equal(audit.statusCode, 200);
      assert.equal(audit.json().data.endpoint, 'validate_batch');
      assert.deepEqual(audit.json().data.response, payload);
      assert.deepEqual(audit.json().data.request_body, { vat_numbers: input, async: true });
    });

    it('only the key that created a job sees it', async () => {
      const sibling = await t.key('business', 'live', { accountId: live.accountId });
      const res = await submit(live, wellFormedNumbers('FR', 2, 7));
      const id = res.json().data.id;
      assert.equal((await get(sibling, id)).statusCode, 404);
      assert.equal((await get(live, id)).statusCode, 200);
      await t.container.batchWorker.drain();
    });

    it('retries items whose registry is down with backoff, and answers them once it is back', async () => {
      sim.control({ down: ['DE'] });
      const de = wellFormedNumbers('DE', 3, 300);
      const at = wellFormedNumbers('AT', 3, 300);
      const res = await submit(live, [...de, ...at]);
      const id = res.json().data.id;
      await t.container.batchWorker.drain();
      let data = (await get(live, id)).json().data;
      assert.equal(data.status, 'running');
      assert.equal(data.done, 3, 'the AT items are done; the DE items wait for a retry');
      assert.equal(data.failed, 0);
      const rows = await shared.kysely
        .selectFrom('batch_items')
        .select(['attempts', 'retry_until', 'last_error', 'next_attempt_at'])
        .where('job_id', '=', id)
        .where('status', '=', 'pending')
        .execute();
      assert.equal(rows.length, 3);
      for (const row of rows) {
        assert.equal(row.attempts, 1);
        assert.equal(row.retry_until, '2026-11-22T12:01:00.000Z');
        assert.ok(row.last_error);
      }
      sim.control({ up: ['DE'] });
      clock.advance(2_000);
      await t.container.batchWorker.drain();
      data = (await get(live, id)).json().data;
      assert.equal(data.status, 'completed');
      assert.equal(data.failed, 0);
      assert.deepEqual(
        (data.results as Item[]).map((r) => r.data?.vat_number),
        [...de, ...at],
      );
    });

    it('fails an item with registry_unavailable once the retry deadline has passed', async () => {
      sim.control({ down: ['DE'] });
      const de = wellFormedNumbers('DE', 2, 400);
      const at = wellFormedNumbers('AT', 1, 400);
      const res = await submit(live, [...de, ...at]);
      const id = res.json().data.id;
      await t.container.batchWorker.drain();
      for (let i = 0; i < 10 && (await get(live, id)).json().data.status !== 'completed'; i++) {
        clock.advance(20_000);
        await t.container.batchWorker.drain();
      }
      const data = (await get(live, id)).json().data;
      assert.equal(data.status, 'completed');
      assert.deepEqual(data.summary, { total: 3, successful: 1, failed: 2 });
      assert.equal(data.results[0].error.code, 'registry_unavailable');
      assert.equal(data.results[1].error.code, 'registry_unavailable');
      assert.equal(data.results[2].ok, true);
    });

    it('a crashed worker’s items are claimed again after their lease; finished items never are', async () => {
      // A second instance on the same database, as in the scaled mode.
      const other = await buildTestApp(env(urls), { db: shared, clock });
      try {
        const numbers = wellFormedNumbers('PL', 12, 500);
        const id = (await submit(live, numbers)).json().data.id;
        // Instance A claims six items and dies before finishing them (nothing is written).
        const lost = await t.container.batch.claimDue(6);
        assert.equal(lost.length, 6);
        // Instance B takes the rest, never A's leased items.
        const before = viesCalls(sim);
        await other.container.batchWorker.drain();
        assert.equal(viesCalls(sim) - before, 6);
        let data = (await get(live, id)).json().data;
        assert.equal(data.done, 6);
        assert.equal(data.status, 'running');
        // Past the lease, B claims A's items and finishes the job; the six finished items are not asked again.
        clock.advance(31_000);
        await other.container.batchWorker.drain();
        assert.equal(viesCalls(sim) - before, 12);
        data = (await get(live, id)).json().data;
        assert.equal(data.status, 'completed');
        assert.equal(data.done, 12);
        const events = await shared.kysely
          .selectFrom('events')
          .select('payload')
          .where('type', '=', 'batch.completed')
          .execute();
        assert.equal(
          events.filter((e) => JSON.parse(e.payload).data.id === id).length,
          1,
          'one event per job',
        );
      } finally {
        await other.close();
      }
    });

    it('claims at most the per-country capacity, leasing no item it would give back', async () => {
      const id = (
        await submit(live, [...wellFormedNumbers('IT', 30, 700), ...wellFormedNumbers('FR', 30, 700)])
      ).json().data.id;
      const claimed = await t.container.batch.claimDue(50);
      const perCountry = new Map<string, number>();
      for (const item of claimed) perCountry.set(item.country, (perCountry.get(item.country) ?? 0) + 1);
      assert.deepEqual([...perCountry.keys()].sort(), ['FR', 'IT']);
      const cap = Math.max(...perCountry.values());
      assert.ok(cap < 30, 'capped per country');
      assert.equal(perCountry.get('IT'), perCountry.get('FR'));
      const leased = await shared.kysely
        .selectFrom('batch_items')
        .select('id')
        .where('job_id', '=', id)
        .where('claimed_by', 'is not', null)
        .execute();
      assert.deepEqual(leased.map((r) => r.id).sort(), claimed.map((i) => i.id).sort());
      // Full countries are not claimed again until their items finish.
      assert.deepEqual(await t.container.batch.claimDue(50), []);
      for (const item of claimed) await t.container.batch.processItem(item);
      await t.container.batchWorker.drain();
      const data = (await get(live, id)).json().data;
      assert.equal(data.status, 'completed');
      assert.equal(data.done, 60);
    });

    it('commits items that finish close together in one transaction', async () => {
      const test = await t.key('business', 'test');
      const id = (
        await submit(test, [...wellFormedNumbers('IT', 4, 900), ...wellFormedNumbers('FR', 4, 900)])
      ).json().data.id;
      const claimed = await t.container.batch.claimDue(50);
      assert.equal(claimed.length, 8);
      const kysely = shared.kysely;
      const original = kysely.transaction;
      let transactions = 0;
      kysely.transaction = function (this: typeof kysely) {
        transactions++;
        return original.call(this);
      } as typeof original;
      try {
        await Promise.all(claimed.map((item) => t.container.batch.processItem(item)));
      } finally {
        kysely.transaction = original;
      }
      // One transaction for the eight results, one for the job's completion.
      assert.equal(transactions, 2);
      const data = (await get(test, id)).json().data;
      assert.equal(data.status, 'completed');
      assert.equal(data.done, 8);
    });

    it('an item whose result the database refuses is retried, then ended as unavailable; the job completes', async () => {
      const [poison] = wellFormedNumbers('FR', 1, 950);
      const others = wellFormedNumbers('IT', 2, 950);
      // The database refuses to store the registry's answer for one number (as PostgreSQL refused a
      // NUL in a company name): before, its item stayed leased and was claimed again for ever.
      const national = (poison as string).slice(2);
      const refuse =
        target.name === 'sqlite'
          ? [
              `CREATE TRIGGER refuse_answer BEFORE INSERT ON registry_answers WHEN NEW.vat_number LIKE '%${national}' BEGIN SELECT RAISE(ABORT, 'refused'); END`,
            ]
          : [
              `CREATE FUNCTION refuse_answer() RETURNS trigger AS $$ BEGIN IF NEW.vat_number LIKE '%${national}' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`,
              'CREATE TRIGGER refuse_answer BEFORE INSERT OR UPDATE ON registry_answers FOR EACH ROW EXECUTE FUNCTION refuse_answer()',
            ];
      for (const statement of refuse) await sql.raw(statement).execute(shared.kysely);
      try {
        const id = (await submit(live, [poison as string, ...others])).json().data.id;
        await t.container.batchWorker.drain();
        for (let i = 0; i < 10 && (await get(live, id)).json().data.status !== 'completed'; i++) {
          clock.advance(20_000);
          await t.container.batchWorker.drain();
        }
        const data = (await get(live, id)).json().data;
        assert.equal(data.status, 'completed');
        assert.deepEqual(data.summary, { total: 3, successful: 2, failed: 1 });
        assert.equal(data.results[0].error.code, 'registry_unavailable');
        assert.match(data.results[0].error.message, /could not be stored/);
        assert.equal(data.results[1].ok, true);
        assert.equal(data.results[2].ok, true);
        const item = await shared.kysely
          .selectFrom('batch_items')
          .select(['attempts'])
          .where('job_id', '=', id)
          .where('vat_number', '=', poison as string)
          .executeTakeFirstOrThrow();
        assert.ok(item.attempts >= 1, `attempts: ${item.attempts}`);
      } finally {
        await sql
          .raw('DROP TRIGGER refuse_answer' + (target.name === 'sqlite' ? '' : ' ON registry_answers'))
          .execute(shared.kysely);
        if (target.name === 'postgres') await sql.raw('DROP FUNCTION refuse_answer()').execute(shared.kysely);
      }
    });

    it('two instances claiming at once take disjoint items', async () => {
      const other = await buildTestApp(env(urls), { db: shared, clock });
      try {
        const id = (await submit(live, wellFormedNumbers('IT', 40, 600))).json().data.id;
        const [a, b] = await Promise.all([
          t.container.batch.claimDue(30),
          other.container.batch.claimDue(30),
        ]);
        const ids = [...(a ?? []), ...(b ?? [])].map((i) => i.id);
        assert.equal(new Set(ids).size, ids.length);
        for (const item of a ?? []) await t.container.batch.processItem(item);
        for (const item of b ?? []) await other.container.batch.processItem(item);
        await t.container.batchWorker.drain();
        const data = (await get(live, id)).json().data;
        assert.equal(data.status, 'completed');
        assert.equal(data.done, 40);
      } finally {
        await other.close();
      }
    });
  });
}
