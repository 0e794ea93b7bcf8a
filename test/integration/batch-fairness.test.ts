import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import type { BatchItemsTable } from '../../src/db/schema.js';
import { createManualClock } from '../../src/lib/clock.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { wellFormedNumbers } from '../helpers/batch-numbers.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

for (const target of await databaseTargets()) {
  describe(`batch job fairness on ${target.name}`, { skip: target.skip }, () => {
    let db: TestDb;
    let t: TestApp;
    const clock = createManualClock('2026-11-27T12:00:00.000Z');
    let shared: Db;

    before(async () => {
      db = await target.open();
      shared = { ...db, close: async () => {} };
      t = await buildTestApp({ OPENVAT_STATUS_POLL_MS: '0' }, { db: shared, clock });
    });
    afterEach(async () => {
      await t.container.batchWorker.drain();
    });
    after(async () => {
      await t.close();
      await db.dispose();
    });

    const submit = (key: TestKey, vatNumbers: string[]) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/validate/batch',
        headers: key.headers,
        payload: { vat_numbers: vatNumbers, async: true },
      });
    const get = (key: TestKey, id: string) =>
      t.app.inject({ method: 'GET', url: `/v1/validate/batch/${id}`, headers: key.headers });

    it('a key with many queued jobs takes turns with another key: the small job is claimed alongside from the first claim', async () => {
      const busy = await t.key('business', 'test');
      const small = await t.key('business', 'test');
      const busyJobs: string[] = [];
      for (let j = 0; j < 8; j += 1) {
        const res = await submit(busy, wellFormedNumbers('IT', 30, 1_000 + j * 30));
        assert.equal(res.statusCode, 202, res.body);
        busyJobs.push(res.json().data.id);
      }
      const res = await submit(small, wellFormedNumbers('IT', 10, 2_000));
      assert.equal(res.statusCode, 202, res.body);
      const smallJob = res.json().data.id as string;

      // The worker's claims, driven one at a time; each claim's items are worked before the next.
      const claims: BatchItemsTable[][] = [];
      for (let round = 0; round < 50; round += 1) {
        const claimed = await t.container.batch.claimDue(8);
        if (claimed.length === 0) break;
        claims.push(claimed);
        await Promise.all(claimed.map((item) => t.container.batch.processItem(item)));
      }
      const ofSmall = (claim: BatchItemsTable[]) => claim.filter((i) => i.job_id === smallJob).length;
      assert.deepEqual(
        claims.slice(0, 3).map((c) => [c.length, ofSmall(c)]),
        [
          [8, 4],
          [8, 4],
          [8, 2],
        ],
        'the two keys take turns: half of each claim goes to the small job until it is done',
      );
      const first = claims[0]!.filter((i) => i.job_id !== smallJob);
      assert.equal(
        new Set(first.map((i) => i.job_id)).size,
        first.length,
        "the busy key's jobs take turns too: its share of the first claim comes from as many jobs",
      );
      assert.equal((await get(small, smallJob)).json().data.status, 'completed');
      assert.equal(claims.flat().length, 8 * 30 + 10, 'every item claimed once');
      for (const id of busyJobs) assert.equal((await get(busy, id)).json().data.status, 'completed');
    });

    it("each country's items are still paced: at most a country's capacity per claim, the keys side by side within it", async () => {
      const a = await t.key('business', 'test');
      const b = await t.key('business', 'test');
      const both = [...wellFormedNumbers('FR', 20, 3_000), ...wellFormedNumbers('DE', 20, 3_000)];
      const ja = (await submit(a, both)).json().data.id;
      const jb = (await submit(b, wellFormedNumbers('FR', 20, 3_100))).json().data.id;
      const claimed = await t.container.batch.claimDue(40);
      const count = (job: string, country: string) =>
        claimed.filter((i) => i.job_id === job && i.country === country).length;
      // The test app keeps 8 items of a country in flight (4 × OPENVAT_REGISTRY_CONCURRENCY).
      assert.equal(count(ja, 'FR') + count(jb, 'FR'), 8, 'FR is at its capacity');
      assert.equal(count(ja, 'DE'), 8, "a country at its capacity does not hold back another's items");
      assert.ok(
        count(jb, 'FR') >= count(ja, 'FR'),
        `the key with FR only is not passed over: ${count(jb, 'FR')}`,
      );
      for (const item of claimed) await t.container.batch.processItem(item);
    });

    it('a key has at most its plan’s number of unfinished jobs: 429 rate_limited with Retry-After, then again once one has completed', async () => {
      const pro = await t.key('pro', 'test');
      const ids: string[] = [];
      for (let j = 0; j < 10; j += 1) {
        const res = await submit(pro, wellFormedNumbers('AT', 2, 4_000 + j * 2));
        assert.equal(res.statusCode, 202, res.body);
        ids.push(res.json().data.id);
      }
      const refused = await submit(pro, wellFormedNumbers('AT', 2, 4_100));
      assert.equal(refused.statusCode, 429, refused.body);
      assert.equal(refused.headers['retry-after'], '30');
      const error = refused.json().error;
      assert.equal(error.code, 'rate_limited');
      assert.match(error.message, /10 unfinished batch jobs/);
      assert.deepEqual(
        { limit: error.details.limit, unfinished: error.details.unfinished },
        { limit: 10, unfinished: 10 },
      );
      const jobs = await shared.kysely
        .selectFrom('batch_jobs')
        .select('id')
        .where('key_id', '=', pro.id)
        .execute();
      assert.equal(jobs.length, 10, 'the refused job was not stored');

      // Another key of the same plan is not counted with it.
      const other = await t.key('pro', 'test');
      assert.equal((await submit(other, wellFormedNumbers('AT', 1, 4_200))).statusCode, 202);
      // A plan without batch jobs is still refused as before.
      const starter = await t.key('starter', 'test');
      assert.equal((await submit(starter, wellFormedNumbers('AT', 1, 4_300))).statusCode, 402);

      // Once the jobs have completed, the key may queue its plan's number again, and requests sent
      // at once cannot pass the limit together.
      await t.container.batchWorker.drain();
      for (const id of ids) assert.equal((await get(pro, id)).json().data.status, 'completed');
      const again = await Promise.all(
        Array.from({ length: 12 }, (_, j) => submit(pro, wellFormedNumbers('AT', 2, 4_400 + j * 2))),
      );
      assert.deepEqual(again.map((r) => r.statusCode).sort(), [
        ...Array(10).fill(202),
        ...Array(2).fill(429),
      ]);
    });
  });
}
