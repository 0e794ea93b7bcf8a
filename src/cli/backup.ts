import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Command } from 'commander';
import type { Config } from '../config.js';
import { MIGRATION_NAMES } from '../db/migrations/index.js';
import { missingSqliteFile } from './database.js';
import { UsageError } from './usage-error.js';

/** The SQLite file `DATABASE_URL` names; PostgreSQL and in-memory databases are refused. */
function sqliteFile(databaseUrl: string, command: 'backup' | 'restore'): string {
  if (!databaseUrl.startsWith('sqlite:')) {
    throw new UsageError(
      `openvat ${command} works on a SQLite file; DATABASE_URL names PostgreSQL: use pg_dump and pg_restore (docs/deployment.md)`,
    );
  }
  const path = databaseUrl.slice('sqlite:'.length);
  if (path === '' || path === ':memory:')
    throw new UsageError(`DATABASE_URL names an in-memory database; there is nothing to ${command}`);
  return resolve(path);
}

/** Copies the database open as `source` to a new file `out` in one step: one consistent snapshot. */
async function copyTo(source: SQLite.Database, out: string): Promise<void> {
  // The first step only counts the pages; the next copies every page at once, inside one read
  // transaction, so the copy is the database as one commit left it. In WAL mode the service's writes
  // go on meanwhile; they are not in the copy.
  await source.backup(out, { progress: ({ totalPages }) => totalPages + 1 });
  const copy = new SQLite(out);
  try {
    // A single file that opens anywhere, without a write-ahead log next to it.
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
}

/** `ok`, or the first problem `PRAGMA integrity_check` reports. */
function integrity(db: SQLite.Database): string {
  const rows = db.pragma('integrity_check') as Array<{ integrity_check: string }>;
  return rows[0]?.integrity_check ?? 'no answer';
}

/** Why `file` is not an openvat database this version can use, or null when it is one. */
async function notAnOpenvatDatabase(db: SQLite.Database): Promise<string | null> {
  const table = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kysely_migration'")
    .get();
  if (!table) return 'it is not an openvat database (it has no migration table)';
  const applied = (db.prepare('SELECT name FROM kysely_migration').all() as Array<{ name: string }>).map(
    (row) => row.name,
  );
  const known = MIGRATION_NAMES;
  if (!applied.includes(known[0] as string))
    return 'it is not an openvat database (its migrations are not ours)';
  const unknown = applied.filter((name) => !known.includes(name));
  if (unknown.length > 0)
    return `it was written by a newer openvat (migrations unknown here: ${unknown.join(', ')}); restore it with that version`;
  return null;
}

/** The backup at `file`, opened read-only once it is known to be a sound openvat database. */
async function openBackup(file: string): Promise<SQLite.Database> {
  if (!existsSync(file) || !statSync(file).isFile()) throw new UsageError(`no backup at ${file}`);
  let db: SQLite.Database;
  try {
    db = new SQLite(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new UsageError(`${file} cannot be read as a database: ${(error as Error).message}`);
  }
  try {
    let problem: string | null;
    try {
      const check = integrity(db);
      problem = check === 'ok' ? await notAnOpenvatDatabase(db) : `its integrity check fails: ${check}`;
    } catch (error) {
      problem = `it is not a SQLite database (${(error as Error).message})`;
    }
    if (problem !== null) throw new UsageError(`${file} cannot be restored: ${problem}`);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Whether another connection has the database open (a running service): leaving WAL mode needs the
 * only connection to it. Returns with the database in rollback-journal mode, its log checkpointed.
 */
function assertNotInUse(file: string): void {
  const db = new SQLite(file, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 0');
    db.pragma('journal_mode = DELETE');
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY') {
      throw new UsageError(
        `${file} is in use (is openvat serve running on it?): stop the service, then restore`,
      );
    }
    throw error;
  } finally {
    db.close();
  }
}

function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

/** `openvat backup --out FILE` and `openvat restore FILE`: copies of a SQLite database. */
export function createBackupCommands(config: () => Config): Command[] {
  const backup = new Command('backup')
    .description('copy the SQLite database to a new file, safely while the service runs')
    .requiredOption('--out <file>', 'the backup file to write (must not exist)')
    .action(async (options: { out: string }) => {
      const path = sqliteFile(config().databaseUrl, 'backup');
      const missing = missingSqliteFile(`sqlite:${path}`);
      if (missing !== null) throw new UsageError(`no database at ${missing}; check DATABASE_URL`);
      const out = resolve(options.out);
      if (existsSync(out)) throw new UsageError(`${out} exists; a backup never overwrites a file`);
      if (!existsSync(dirname(out))) throw new UsageError(`the directory of ${out} does not exist`);
      // Written under another name and renamed once verified: a file at `out` is always a whole backup.
      const partial = `${out}.partial-${process.pid}`;
      const source = new SQLite(path, { fileMustExist: true });
      try {
        source.pragma('busy_timeout = 5000');
        await copyTo(source, partial);
        const copy = new SQLite(partial, { readonly: true });
        let check: string;
        let pages: number;
        try {
          check = integrity(copy);
          pages = copy.pragma('page_count', { simple: true }) as number;
        } finally {
          copy.close();
        }
        if (check !== 'ok') throw new Error(`the copy fails its integrity check: ${check}`);
        renameSync(partial, out);
        console.log(
          `backed up ${path} to ${out} (${pages} pages, ${statSync(out).size} bytes, integrity ok)`,
        );
      } finally {
        source.close();
        rmSync(partial, { force: true });
      }
    });

  const restore = new Command('restore')
    .description('replace the SQLite database with a backup (the service must be stopped)')
    .argument('<file>', 'a backup written by openvat backup')
    .action(async (file: string) => {
      const path = sqliteFile(config().databaseUrl, 'restore');
      const source = await openBackup(resolve(file));
      try {
        let kept: string | null = null;
        if (existsSync(path)) {
          assertNotInUse(path);
          // The database being replaced is kept next to it, in case the wrong backup was restored.
          kept = `${path}.replaced-${timestamp()}`;
          const current = new SQLite(path, { fileMustExist: true });
          try {
            await copyTo(current, kept);
          } finally {
            current.close();
          }
        } else {
          mkdirSync(dirname(path), { recursive: true });
        }
        await source.backup(path, { progress: ({ totalPages }) => totalPages + 1 });
        const restored = new SQLite(path, { fileMustExist: true });
        let check: string;
        try {
          check = integrity(restored);
        } finally {
          restored.close();
        }
        if (check !== 'ok') throw new Error(`the restored database fails its integrity check: ${check}`);
        console.log(`restored ${resolve(file)} into ${path}`);
        if (kept) console.log(`the database it replaced is kept at ${kept}`);
      } finally {
        source.close();
      }
    });

  return [backup, restore];
}
