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
  });
}
