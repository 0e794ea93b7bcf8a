import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import * as runSuccess from '../../src/db/migrations/2026-12-03-100-evidence-run-success.js';
import { createEvidenceTimestampsRepository } from '../../src/modules/evidence-timestamps/repository.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

const T0 = '2026-12-01T10:00:00.000Z';
const T1 = '2026-12-01T10:05:00.000Z';
const T2 = '2026-12-01T11:00:00.000Z';
const T3 = '2026-12-01T11:05:00.000Z';

// The time-stamping run is claimed under the scheduled syncs' lease (createScheduledSyncs): one
// instance at a time, and its row keeps when the last run succeeded beside how the last one ended.
for (const target of await databaseTargets()) {
  describe(`the evidence time-stamping run's lease (${target.name})`, { skip: target.skip }, () => {
    let db: TestDb;
    let repository: ReturnType<typeof createEvidenceTimestampsRepository>;

    before(async () => {
      db = await target.open();
      repository = createEvidenceTimestampsRepository(db.kysely, db.dialect);
    });
    after(() => db.dispose());

    it('is claimed by one instance at a time, and records its successes and failures', async () => {
      assert.equal(await repository.run(), undefined, 'no row before the first claim');
      const claimed = await repository.claimRun('worker-a', T0, T1);
      assert.equal(claimed?.id, 'evidence-head');
      assert.equal(claimed?.claimed_by, 'worker-a');
      assert.equal(claimed?.last_success_at, null);
      assert.equal(await repository.claimRun('worker-b', T0, T1), null, 'held by worker-a');

      await repository.finishRun('worker-b', { at: T0, nextRunAt: T0, error: null });
      assert.equal((await repository.run())?.claimed_by, 'worker-a', 'only the holder finishes it');

      await repository.finishRun('worker-a', { at: T0, nextRunAt: T2, error: null });
      assert.deepEqual(await repository.run(), {
        id: 'evidence-head',
        locked_until: null,
        claimed_by: null,
        next_run_at: T2,
        last_run_at: T0,
        last_success_at: T0,
        last_error: null,
      });
      assert.equal(await repository.claimRun('worker-b', T1, T3), null, 'not due yet');

      assert.equal((await repository.claimRun('worker-b', T2, T3))?.claimed_by, 'worker-b');
      await repository.finishRun('worker-b', { at: T2, nextRunAt: T3, error: 'no authority answered' });
      const failed = await repository.run();
      assert.equal(failed?.last_run_at, T2);
      assert.equal(failed?.last_error, 'no authority answered');
      assert.equal(failed?.last_success_at, T0, 'a failed run keeps the last success');
      assert.equal(failed?.next_run_at, T3);
    });

    it('is taken over once the lease of an instance that never finished runs out', async () => {
      const leaseEnd = '2026-12-01T12:05:00.000Z';
      assert.equal((await repository.claimRun('worker-a', T3, leaseEnd))?.claimed_by, 'worker-a');
      assert.equal(
        await repository.claimRun('worker-c', '2026-12-01T12:04:59.999Z', '2026-12-01T13:00:00.000Z'),
        null,
      );
      const taken = await repository.claimRun('worker-c', leaseEnd, '2026-12-01T13:05:00.000Z');
      assert.equal(taken?.claimed_by, 'worker-c');
      assert.equal(taken?.locked_until, '2026-12-01T13:05:00.000Z');
      await repository.finishRun('worker-a', { at: leaseEnd, nextRunAt: leaseEnd, error: null });
      assert.equal((await repository.run())?.claimed_by, 'worker-c', 'the old holder no longer finishes it');
      await repository.finishRun('worker-c', { at: leaseEnd, nextRunAt: T2, error: null });
    });

    it('the migration carries a run row over: its last run’s time as its last success when it ended well', async () => {
      const runs = () => db.kysely.selectFrom('evidence_timestamp_runs').selectAll().orderBy('id').execute();
      await db.kysely.deleteFrom('evidence_timestamp_runs').execute();
      await runSuccess.down(db.kysely as unknown as Kysely<unknown>);
      // Rows as the version before the migration wrote them (no last_success_at column).
      const old = db.kysely as unknown as Kysely<{
        evidence_timestamp_runs: Record<string, string | null>;
      }>;
      await old
        .insertInto('evidence_timestamp_runs')
        .values([
          {
            id: 'evidence-head',
            locked_until: null,
            claimed_by: null,
            next_run_at: T2,
            last_run_at: T0,
            last_error: null,
          },
          {
            id: 'failed',
            locked_until: null,
            claimed_by: null,
            next_run_at: T2,
            last_run_at: T1,
            last_error: 'HTTP 500',
          },
          {
            id: 'never',
            locked_until: null,
            claimed_by: null,
            next_run_at: T0,
            last_run_at: null,
            last_error: null,
          },
        ])
        .execute();
      await runSuccess.up(db.kysely as unknown as Kysely<unknown>);
      assert.deepEqual(
        (await runs()).map((r) => [r.id, r.last_run_at, r.last_success_at, r.last_error]),
        [
          ['evidence-head', T0, T0, null],
          ['failed', T1, null, 'HTTP 500'],
          ['never', null, null, null],
        ],
      );
      // The carried-over row is claimed and finished as before.
      assert.equal((await repository.claimRun('worker-a', T2, T3))?.last_success_at, T0);
      await repository.finishRun('worker-a', { at: T2, nextRunAt: T3, error: null });
      assert.equal((await repository.run())?.last_success_at, T2);
    });
  });
}
