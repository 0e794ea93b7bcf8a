import { type Kysely, SqliteAdapter, SqliteDialect, sql } from 'kysely';

/**
 * Kysely's SQLite dialect, with a migration lock: Kysely's own takes none (one connection is all it
 * assumes), so two processes starting on one new SQLite file at once (a service and a CLI command,
 * or two instances) both ran the first migration and the second failed on "table … already
 * exists". Here the migrator's lock is SQLite's write lock, a transaction begun `IMMEDIATE` around
 * the whole run: the second process waits for it (`busy_timeout`), then finds every migration done.
 */
export class MigrationLockingSqliteDialect extends SqliteDialect {
  override createAdapter(): SqliteAdapter {
    return new MigrationLockingSqliteAdapter();
  }
}

class MigrationLockingSqliteAdapter extends SqliteAdapter {
  override async acquireMigrationLock(db: Kysely<unknown>): Promise<void> {
    await sql`BEGIN IMMEDIATE`.execute(db);
  }

  override async releaseMigrationLock(db: Kysely<unknown>): Promise<void> {
    await sql`COMMIT`.execute(db);
  }
}
