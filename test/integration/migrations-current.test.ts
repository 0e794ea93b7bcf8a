import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { createDatabase, type Db } from '../../src/db/database.js';
import { databaseTargets, databaseUrl, type TestDb } from '../helpers/db.js';

// A database on which every migration of this version ran (every start but the first after an
// upgrade, every CLI command) is not migrated again: no lock is taken, so a start does not wait for
// another process's write, and a command that only reads writes nothing.

describe('migrating an up-to-date SQLite file while another connection holds its write lock', () => {
  let dir: string;
  let db: Db;
  let other: SQLite.Database;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-migrated-'));
    const file = join(dir, 'openvat.sqlite');
    const first = createDatabase(`sqlite:${file}`, { checkpointMs: 0 });
    await first.migrate();
    await first.close();
    other = new SQLite(file);
    other.exec('BEGIN IMMEDIATE');
    db = createDatabase(`sqlite:${file}`, { checkpointMs: 0 });
  });
  after(async () => {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('returns without waiting for the lock (the migrator would wait, then fail "database is locked")', async () => {
    await db.migrate();
    const names = (await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(db.kysely)).rows;
    assert.ok(names.length > 0);
  });

  it('a database that lacks a migration is still migrated, once the lock is free', async () => {
    other.exec('ROLLBACK');
    // The first migration's record is gone, as if it had not run, while what it made is kept: the
    // migrator runs it again, which fails on the tables it made already, the proof that it ran.
    const first = other.prepare('SELECT name FROM kysely_migration ORDER BY name LIMIT 1').get() as {
      name: string;
    };
    other.prepare('DELETE FROM kysely_migration WHERE name = ?').run(first.name);
    await assert.rejects(db.migrate(), new RegExp(`Migration ${first.name} failed: .*already exists`));
  });
});

for (const target of (await databaseTargets()).filter((t) => t.name === 'postgres')) {
  describe('migrating an up-to-date PostgreSQL database while another session holds the migration lock', {
    skip: target.skip,
  }, () => {
    let db: TestDb;
    let other: pg.Client;
    before(async () => {
      db = await target.open();
      const name = (await sql<{ name: string }>`SELECT current_database() AS name`.execute(db.kysely)).rows[0]
        ?.name as string;
      other = new pg.Client({ connectionString: databaseUrl(process.env.TEST_DATABASE_URL as string, name) });
      await other.connect();
      // Kysely's PostgreSQL migration lock (PostgresAdapter.acquireMigrationLock), held by a transaction.
      await other.query('BEGIN');
      await other.query('SELECT pg_advisory_xact_lock(3853314791062309107)');
    });
    after(async () => {
      await other.query('ROLLBACK').catch(() => {});
      await other.end();
      await db.dispose();
    });

    it('returns without waiting for the lock', async () => {
      await db.migrate();
      const count = await sql<{ n: string }>`SELECT count(*) AS n FROM kysely_migration`.execute(db.kysely);
      assert.ok(Number(count.rows[0]?.n) > 0);
    });
  });
}
