import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createJobStore } from '../../../src/modules/batch/jobs.js';
import { createBatchRepository } from '../../../src/modules/batch/repository.js';
import type { ApiKeyPrincipal } from '../../../src/modules/keys/index.js';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { databaseTargets, type TestDb } from '../../helpers/db.js';

for (const target of await databaseTargets()) {
  describe(`the batch job store on ${target.name}`, { skip: target.skip }, () => {
    let db: TestDb;
    let t: TestApp;
    let owner: ApiKeyPrincipal;
    let other: ApiKeyPrincipal;
    let store: ReturnType<typeof createJobStore>;
    const queued: number[] = [];
    const finished: string[] = [];

    before(async () => {
      db = await target.open();
      t = await buildTestApp({}, { db });
      const principal = async (plan: 'business' | 'pro') => {
        const created = await t.key(plan, 'test');
        const found = await t.container.keys.authenticate(created.key);
        assert.ok(found.kind === 'ok', 'the key is accepted');
        return found.principal;
      };
      owner = await principal('business');
      other = await principal('pro');
      store = createJobStore({
        db,
        repository: createBatchRepository(db.kysely, db.dialect),
        validation: t.container.validation,
        outbox: t.container.outbox,
        clock: t.container.clock,
        ids: t.container.ids,
        onQueued: () => queued.push(1),
        onFinished: (id) => finished.push(id),
        keyState: (keyId) => t.container.keys.stateOf(keyId),
        retentionDays: 30,
      });
    });
    after(async () => {
      await t.close();
      await db.dispose();
    });

    const create = async (vatNumbers: string[], requestId: string) => {
      const job = await store.createJob({
        principal: owner,
        requestId,
        requestBody: { vat_numbers: vatNumbers },
        items: vatNumbers.map((vatNumber) => ({ vatNumber, claim: null })),
        requester: null,
      });
      if (job.kind === 'refused') throw new Error(job.message);
      return job.job;
    };

    it('queues a job of well-formed numbers and shows its progress to its key only', async () => {
      const job = await create(['DE100000008', 'DE123', 'FR40303265045'], 'req-queued');
      assert.equal(job.status, 'queued');
      assert.deepEqual(
        [job.total, job.done, job.failed],
        [3, 1, 1],
        'the malformed number is answered at once',
      );
      assert.equal(queued.length, 1, 'the worker is woken');
      const seen = await store.getJob(owner, job.id);
      assert.ok(seen.kind === 'progress');
      assert.deepEqual([seen.view.status, seen.view.done, seen.view.failed], ['queued', 1, 1]);
      assert.equal((await store.getJob(other, job.id)).kind, 'refused', "another key's job is not found");
    });

    it('a job of malformed numbers only is completed at once: results in input order, its audit record, recorded once', async () => {
      const job = await create(['DE123', 'US123456789', 'FR1'], 'req-done');
      const results = (job.results ?? []) as Array<{ error?: { code: string } }>;
      assert.equal(job.status, 'completed');
      assert.deepEqual(job.summary, { total: 3, successful: 0, failed: 3 });
      assert.deepEqual(
        results.map((r) => r.error?.code),
        ['invalid_format', 'country_unsupported', 'invalid_format'],
      );
      assert.deepEqual(finished, [job.id]);
      const audit = await db.kysely
        .selectFrom('audits')
        .selectAll()
        .where('request_id', '=', 'req-done')
        .executeTakeFirstOrThrow();
      assert.equal(audit.status_code, 202);
      const recorded = JSON.parse(audit.response) as { data: { id: string; results: unknown[] } };
      assert.equal(recorded.data.id, job.id);
      assert.equal(recorded.data.results.length, 3);
      const stored = await store.getJob(owner, job.id);
      assert.ok(stored.kind === 'completed');
      assert.deepEqual(JSON.parse(stored.json), recorded.data, 'the view is the recorded result');
      await store.finishJob(job.id);
      assert.deepEqual(finished, [job.id], 'finishing again records nothing');
    });
  });
}
