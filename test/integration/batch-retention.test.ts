import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { createManualClock } from '../../src/lib/clock.js';
import { PLAYGROUND_KEY } from '../../src/modules/playground/playground.js';
import { createFakeRegistry } from '../fakes/fake-registry.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { wellFormedNumbers } from '../helpers/batch-numbers.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

const DAY = 86_400_000;
const demo = { authorization: `Bearer ${PLAYGROUND_KEY}` };

for (const target of await databaseTargets()) {
  describe(`batch job retention and revoked keys on ${target.name}`, { skip: target.skip }, () => {
    let db: TestDb;
    let shared: Db;
    const apps: TestApp[] = [];
    const clock = createManualClock('2026-11-22T12:00:00.000Z');
    const registry = createFakeRegistry();

    async function instance(env: Record<string, string> = {}): Promise<TestApp> {
      const t = await buildTestApp(
        {
          OPENVAT_STATUS_POLL_MS: '0',
          OPENVAT_REGISTRY_BACKOFF_MS: '1',
          OPENVAT_BATCH_LEASE_MS: '30000',
          ...env,
        },
        { db: shared, clock, registries: registry.ports },
      );
      apps.push(t);
      return t;
    }

    beforeEach(async () => {
      db = await target.open();
      shared = { ...db, close: async () => {} };
      clock.set('2026-11-22T12:00:00.000Z');
    });
    afterEach(async () => {
      registry.releaseAll();
      for (const t of apps.splice(0)) await t.close();
      await db.dispose();
    });

    const submit = (t: TestApp, headers: Record<string, string>, vatNumbers: string[]) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/validate/batch',
        headers,
        remoteAddress: '198.51.100.20',
        payload: { vat_numbers: vatNumbers, async: true },
      });
    const get = (t: TestApp, headers: Record<string, string>, id: string) =>
      t.app.inject({
        method: 'GET',
        url: `/v1/validate/batch/${id}`,
        headers,
        remoteAddress: '198.51.100.21',
      });
    const jobRows = () => shared.kysely.selectFrom('batch_jobs').select(['id', 'status']).execute();
    const itemCount = async (jobId: string) =>
      (await shared.kysely.selectFrom('batch_items').select('id').where('job_id', '=', jobId).execute())
        .length;

    it('ended jobs are served, then 404 and purged with their items after OPENVAT_BATCH_JOB_RETENTION_DAYS; unfinished jobs stay', async () => {
      const t = await instance({ OPENVAT_BATCH_JOB_RETENTION_DAYS: '7' });
      assert.equal(t.container.config.batch.jobRetentionDays, 7);
      const key = await t.key('business', 'test');
      const done = await submit(t, key.headers, wellFormedNumbers('AT', 5, 10));
      assert.equal(done.statusCode, 202, done.body);
      const doneId = done.json().data.id as string;
      await t.container.batchWorker.drain();
      assert.equal((await get(t, key.headers, doneId)).json().data.status, 'completed');

      // A job created now, never worked: still queued a week later.
      const waiting = await submit(t, key.headers, wellFormedNumbers('FR', 3, 10));
      const waitingId = waiting.json().data.id as string;

      clock.advance(7 * DAY - 1);
      assert.equal((await get(t, key.headers, doneId)).statusCode, 200, 'kept for the whole retention');
      assert.equal(await t.container.batch.purgeExpired(), 0);

      clock.advance(1);
      const gone = await get(t, key.headers, doneId);
      assert.equal(gone.statusCode, 404, 'not served once past the retention, before any purge');
      const unknown = await get(t, key.headers, '019a0000-0000-7000-8000-000000000000');
      assert.equal(unknown.statusCode, 404);
      assert.equal(gone.json().error.code, unknown.json().error.code, 'answered like an unknown job');
      assert.equal(await itemCount(doneId), 5);

      // Two rows per statement: the five items and the job take several rounds.
      assert.equal(await t.container.batch.purgeExpired(2), 1);
      assert.equal(await itemCount(doneId), 0);
      assert.deepEqual(await jobRows(), [{ id: waitingId, status: 'queued' }]);
      assert.equal(await itemCount(waitingId), 3, 'a queued job is never purged, however old');

      await t.container.batchWorker.drain();
      const finished = await get(t, key.headers, waitingId);
      assert.equal(finished.json().data.status, 'completed');
      assert.equal(await t.container.batch.purgeExpired(), 0, 'its retention runs from when it ended');
      clock.advance(7 * DAY);
      assert.equal(await t.container.batch.purgeExpired(), 1);
      assert.deepEqual(await jobRows(), []);
    });

    it('keeps ended jobs 30 days by default', async () => {
      const t = await instance();
      assert.equal(t.container.config.batch.jobRetentionDays, 30);
      const key = await t.key('business', 'test');
      const id = (await submit(t, key.headers, wellFormedNumbers('AT', 2, 20))).json().data.id as string;
      await t.container.batchWorker.drain();
      clock.advance(29 * DAY);
      assert.equal(await t.container.batch.purgeExpired(), 0);
      assert.equal((await get(t, key.headers, id)).statusCode, 200);
      clock.advance(DAY);
      assert.equal((await get(t, key.headers, id)).statusCode, 404);
      assert.equal(await t.container.batch.purgeExpired(), 1);
    });

    it("the demo key's jobs are served 24 hours after creation, then 404 and purged; a key of one's own keeps its job", async () => {
      const t = await instance();
      const own = await t.key('business', 'test');
      const res = await submit(t, demo, ['DE100000008', 'DE100000016']);
      assert.equal(res.statusCode, 202, res.body);
      const id = res.json().data.id as string;
      const ownId = (await submit(t, own.headers, ['DE100000008'])).json().data.id as string;
      await t.container.batchWorker.drain();
      // Any later visitor holds the same key.
      assert.equal((await get(t, demo, id)).json().data.status, 'completed');

      clock.advance(DAY - 1);
      assert.equal((await get(t, demo, id)).statusCode, 200);
      assert.equal(await t.container.batch.purgeExpired(), 0);
      clock.advance(1);
      assert.equal((await get(t, demo, id)).statusCode, 404, 'not served after 24 hours, before any purge');
      assert.equal(await t.container.batch.purgeExpired(), 1);
      assert.equal(await itemCount(id), 0);
      assert.deepEqual(
        (await jobRows()).map((r) => r.id),
        [ownId],
      );
      assert.equal((await get(t, own.headers, ownId)).statusCode, 200);
    });

    it('a job whose key is revoked stops asking registries: cancelled with key_revoked, no event, no audit record', async () => {
      const t = await instance({ OPENVAT_BATCH_CONCURRENCY: '2' });
      const key = await t.key('business', 'live');
      const numbers = wellFormedNumbers('AT', 6, 30);
      const res = await submit(t, key.headers, numbers);
      const id = res.json().data.id as string;

      // Two items are with the registry when the key is revoked; they finish, the others are not asked.
      registry.hold();
      const before = registry.calls.length;
      const first = t.container.batchWorker.runOnce();
      for (let i = 0; i < 2_000 && registry.heldCount() < 2; i++) await new Promise((r) => setTimeout(r, 5));
      assert.equal(registry.heldCount(), 2);
      assert.equal((await t.container.keys.revokeKey(key.id)).kind, 'ok');
      registry.releaseAll();
      await first;
      await t.container.batchWorker.drain();
      clock.advance(10 * 60_000);
      await t.container.batchWorker.drain();
      // The two items held together may reach the registry in either order.
      assert.deepEqual(
        registry.calls.slice(before).sort(),
        numbers.slice(0, 2).sort(),
        'no registry call after the revocation',
      );

      assert.equal((await get(t, key.headers, id)).statusCode, 401, 'the revoked key itself is refused');
      const job = await shared.kysely
        .selectFrom('batch_jobs')
        .select(['status', 'completed_at', 'cancel_reason'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(job, {
        status: 'cancelled',
        completed_at: '2026-11-22T12:00:00.000Z',
        cancel_reason: 'key_revoked',
      });
      const view = await t.container.batch.getJob(
        { id: key.id, accountId: key.accountId, plan: 'business', mode: 'live', defaultRequesterVat: null },
        id,
      );
      assert.ok(view.kind === 'progress');
      assert.equal(view.view.status, 'cancelled');
      assert.equal(view.view.done, 2);
      assert.equal(view.view.cancel_reason?.code, 'key_revoked');
      assert.match(view.view.cancel_reason?.message ?? '', /revoked/);
      assert.equal(view.view.cancelled_at, job.completed_at);
      const pending = await shared.kysely
        .selectFrom('batch_items')
        .select('status')
        .where('job_id', '=', id)
        .where('status', '=', 'pending')
        .execute();
      assert.equal(pending.length, 0, 'no item is left to claim');
      const events = await shared.kysely.selectFrom('events').select('type').execute();
      assert.deepEqual(events, [], 'no batch.completed event');
      const audit = await shared.kysely
        .selectFrom('audits')
        .select('request_id')
        .where('request_id', '=', res.json().meta.request_id)
        .execute();
      assert.deepEqual(audit, [], 'the job never completes');

      // A cancelled job has ended: it is purged after the retention like a completed one.
      clock.advance(30 * DAY);
      assert.equal(await t.container.batch.purgeExpired(), 1);
      assert.equal(await itemCount(id), 0);
    });

    it('a key revoked elsewhere (the CLI, another instance) stops its jobs here within OPENVAT_KEY_CACHE_MS', async () => {
      const t = await instance({ OPENVAT_KEY_CACHE_MS: '5000' });
      const cli = await instance();
      const key = await t.key('business', 'live');
      const kept = await t.key('business', 'live');
      // A first job makes this instance remember the key as active.
      const first = (await submit(t, key.headers, wellFormedNumbers('AT', 1, 40))).json().data.id as string;
      await t.container.batchWorker.drain();

      const id = (await submit(t, key.headers, wellFormedNumbers('AT', 3, 50))).json().data.id as string;
      const other = (await submit(t, kept.headers, wellFormedNumbers('AT', 2, 60))).json().data.id as string;
      assert.equal((await cli.container.keys.revokeKey(key.id)).kind, 'ok');
      // This instance reads the key's state again once its cached state is older than OPENVAT_KEY_CACHE_MS.
      clock.advance(5_001);
      const before = registry.calls.length;
      await t.container.batchWorker.drain();
      assert.deepEqual(
        registry.calls.slice(before).sort(),
        wellFormedNumbers('AT', 2, 60).sort(),
        "only the active key's job asks the registry",
      );
      const statuses = await shared.kysely
        .selectFrom('batch_jobs')
        .select(['id', 'status', 'cancel_reason'])
        .where('id', 'in', [id, other])
        .execute();
      assert.deepEqual(
        statuses.sort((a, b) => (a.id === id ? -1 : b.id === id ? 1 : 0)),
        [
          { id, status: 'cancelled', cancel_reason: 'key_revoked' },
          { id: other, status: 'completed', cancel_reason: null },
        ],
      );
      const events = await shared.kysely.selectFrom('events').select(['type', 'payload']).execute();
      assert.deepEqual(
        events.map((e) => `${e.type} ${JSON.parse(e.payload).data.id}`).sort(),
        [`batch.completed ${first}`, `batch.completed ${other}`].sort(),
        'no event for the cancelled job',
      );
    });
  });
}
