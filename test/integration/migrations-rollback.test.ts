import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { databaseTargets, type TestDb } from '../helpers/db.js';

for (const target of await databaseTargets()) {
  describe(`a database a newer version migrated, on ${target.name}`, { skip: target.skip }, () => {
    let db: TestDb;
    before(async () => {
      db = await target.open();
    });
    after(() => db.dispose());

    it('still starts this version: its additive migrations are taken as done', async () => {
      // What a newer release leaves behind: a migration of its own and the nullable column it added.
      await sql`ALTER TABLE api_keys ADD COLUMN future_note TEXT`.execute(db.kysely);
      await sql`INSERT INTO kysely_migration (name, timestamp) VALUES (${'2099-01-01-001-future'}, ${'2099-01-01T00:00:00.000Z'})`.execute(
        db.kysely,
      );
      await db.migrate();
      const names = (
        await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(db.kysely)
      ).rows.map((r) => r.name);
      assert.ok(names.includes('2099-01-01-001-future'));
      assert.equal(names.length, new Set(names).size, 'nothing ran twice');
      // The service's own writes work on the newer schema.
      await sql`INSERT INTO accounts (id, name, created_at) VALUES (${'acct_x'}, ${'x'}, ${'2026-11-28T00:00:00.000Z'})`.execute(
        db.kysely,
      );
    });
  });
}
