import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { createGroupWriter } from '../../src/db/group-commit.js';
import type { Database } from '../../src/db/schema.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

for (const target of await databaseTargets()) {
  describe(`group commit on ${target.name}`, { skip: target.skip }, () => {
    let db: TestDb;
    before(async () => {
      db = await target.open();
    });
    after(() => db.dispose());

    type Work = (trx: Kysely<Database>) => Promise<void>;
    /** A group writer whose units are pieces of work, run in arrival order in the group's transaction. */
    const createGroupCommit = (kysely: Kysely<Database>) =>
      createGroupWriter<Work, void>(kysely, {
        async write(trx, works) {
          for (const work of works) await work(trx);
          return works.map(() => undefined);
        },
      });

    const account = (id: string) => ({ id, name: null, created_at: '2026-11-22T00:00:00.000Z' });
    const count = async () => (await db.kysely.selectFrom('accounts').select('id').execute()).length;

    it('commits concurrent units together and resolves each once committed', async () => {
      const commit = createGroupCommit(db.kysely);
      const units = Array.from({ length: 50 }, (_, i) =>
        commit.run(async (trx) => {
          await trx
            .insertInto('accounts')
            .values(account(`ok-${i}`))
            .execute();
        }),
      );
      await Promise.all(units);
      assert.equal(await count(), 50);
    });

    it('a failing unit fails alone; the others of its group still commit', async () => {
      const commit = createGroupCommit(db.kysely);
      const before = await count();
      const results = await Promise.allSettled([
        commit.run(async (trx) => {
          await trx.insertInto('accounts').values(account('a-1')).execute();
        }),
        commit.run(async (trx) => {
          await trx.insertInto('accounts').values(account('b-1')).execute();
          // A duplicate key: this unit's transaction fails.
          await trx.insertInto('accounts').values(account('ok-0')).execute();
        }),
        commit.run(async (trx) => {
          await trx.insertInto('accounts').values(account('c-1')).execute();
        }),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.equal(await count(), before + 2);
      const ids = (await db.kysely.selectFrom('accounts').select('id').execute()).map((r) => r.id);
      assert.ok(
        ids.includes('a-1') && ids.includes('c-1') && !ids.includes('b-1'),
        'the failing unit left nothing',
      );
    });

    it('a group that needs no transaction is written outside one; a failing unit of it still fails alone', async () => {
      type Unit = { id: string; transaction: boolean };
      const seen: Array<{ ids: string[]; inTransaction: boolean }> = [];
      const commit = createGroupWriter<Unit, void>(db.kysely, {
        needsTransaction: (units) => units.some((u) => u.transaction),
        async write(trx, units) {
          seen.push({ ids: units.map((u) => u.id), inTransaction: trx.isTransaction });
          // One statement for the whole group: atomic by itself.
          await trx
            .insertInto('accounts')
            .values(units.map((u) => account(u.id)))
            .execute();
          return units.map(() => undefined);
        },
      });
      const before = await count();
      const results = await Promise.allSettled([
        commit.run({ id: 'n-1', transaction: false }),
        commit.run({ id: 'ok-0', transaction: false }), // a duplicate key: the group's statement fails
        commit.run({ id: 'n-3', transaction: false }),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.equal(
        await count(),
        before + 2,
        'the failed statement left nothing; the retried units are kept',
      );
      assert.deepEqual(seen[0], { ids: ['n-1', 'ok-0', 'n-3'], inTransaction: false });
      assert.ok(
        seen.every((s) => !s.inTransaction),
        'the retries run without a transaction too',
      );

      seen.length = 0;
      await Promise.all([
        commit.run({ id: 't-1', transaction: false }),
        commit.run({ id: 't-2', transaction: true }),
      ]);
      assert.deepEqual(seen, [{ ids: ['t-1', 't-2'], inTransaction: true }]);
    });
  });
}
