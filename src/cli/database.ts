import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { createDatabase, type Db } from '../db/database.js';

export class MissingDatabaseError extends Error {
  override name = 'MissingDatabaseError';
}

/**
 * The SQLite file a `sqlite:PATH` URL names when it does not exist, else null (PostgreSQL and
 * in-memory databases are never "missing" here: the server reports those itself).
 */
export function missingSqliteFile(databaseUrl: string): string | null {
  if (!databaseUrl.startsWith('sqlite:')) return null;
  const path = databaseUrl.slice('sqlite:'.length);
  if (path === '' || path === ':memory:') return null;
  return existsSync(path) ? null : resolve(path);
}

/**
 * Opens the database of a command that reads it (keys, evidence, validate-file): a SQLite path
 * that does not exist is refused instead of being created empty — an empty database would make
 * `evidence verify` report an intact chain of nothing. Only `serve` and `migrate` create one.
 */
export function openExistingDatabase(databaseUrl: string): Db {
  const missing = missingSqliteFile(databaseUrl);
  if (missing !== null) {
    throw new MissingDatabaseError(
      `no database at ${missing} (DATABASE_URL=${databaseUrl}); check DATABASE_URL, or create it with "openvat migrate"`,
    );
  }
  // A command's writes are few: SQLite's own checkpoints suffice, without a thread of their own.
  return createDatabase(databaseUrl, { checkpointMs: 0 });
}
