import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, type Migration, type MigrationProvider, Migrator, PostgresDialect, sql } from 'kysely';
import { LRUCache } from 'lru-cache';
import { type CheckpointSettings, sqliteCheckpoints } from './checkpointer.js';
import { MIGRATION_NAMES, migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';
import { MigrationLockingSqliteDialect } from './sqlite-dialect.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  readonly kysely: Kysely<Database>;
  readonly dialect: Dialect;
  /** Human-readable location without credentials, for logs. */
  readonly describe: string;
  migrate(): Promise<void>;
  /**
   * Runs `work` in a transaction that no other instance on this database runs at the same time under
   * the same `name`: SQLite's write lock, taken as the transaction begins (`BEGIN IMMEDIATE`), or a
   * PostgreSQL advisory lock held until it commits. What `work` reads, no such transaction elsewhere
   * changes before this one ends: "is there X? create it" makes X once.
   */
  exclusively<T>(name: string, work: (trx: Kysely<Database>) => Promise<T>): Promise<T>;
  /** True when the database answers a trivial query. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface DatabaseOptions extends CheckpointSettings {
  /** PostgreSQL only: the schema to create tables in (used to isolate test runs). */
  schema?: string;
  /** PostgreSQL only: pool size. */
  poolSize?: number;
  /**
   * PostgreSQL only: statements running longer are cancelled by the server (0 or absent: no bound).
   * Migrations run on a connection of their own without it: an index on a large table may take longer.
   */
  statementTimeoutMs?: number;
  /**
   * PostgreSQL only: told when the server ends an idle connection of the pool (a restart, a
   * failover, a pooler's idle timeout). The pool drops it and opens a new one on next use.
   */
  onConnectionError?: (error: Error) => void;
  /**
   * SQLite files only: whether a missing directory of the file is created (`openvat migrate`, the
   * default path). Otherwise a new database is created only in a directory that exists: a mistyped
   * path is refused instead of becoming an empty database.
   */
  createDirectory?: boolean;
}

/**
 * Opens the database named by a URL: `sqlite:PATH` (`sqlite::memory:` for an in-memory database)
 * or `postgres://…`. The same migrations create the same schema on both.
 */
export function createDatabase(url: string, options: DatabaseOptions = {}): Db {
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length), options);
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgres(url, options);
  throw new Error(`Unsupported DATABASE_URL "${url}": use sqlite:PATH or postgres://…`);
}

/** A SQLite file that cannot be created or written where its URL puts it; the message names `DATABASE_URL`. */
export class DatabaseLocationError extends Error {
  override name = 'DatabaseLocationError';
}

/**
 * Makes sure the SQLite file's directory exists (created only when `createDirectory`) and, with the
 * file, can be written: SQLite creates its write-ahead log and shared-memory files next to the
 * database, and would otherwise fail later, at the first write, or open the file read-only.
 */
function checkSqliteLocation(path: string, createDirectory: boolean): void {
  const file = resolve(path);
  const directory = dirname(file);
  const reason = (error: unknown) => (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  if (existsSync(directory) && !statSync(directory).isDirectory())
    throw new DatabaseLocationError(
      `DATABASE_URL: ${directory}, the SQLite file's directory, is not a directory`,
    );
  if (!existsSync(directory) && !createDirectory)
    throw new DatabaseLocationError(
      `DATABASE_URL: no directory ${directory} for the SQLite file ${file}; check DATABASE_URL (a new database is made only in a directory that exists, at the default path, or by "openvat migrate")`,
    );
  try {
    mkdirSync(directory, { recursive: true });
  } catch (error) {
    throw new DatabaseLocationError(
      `DATABASE_URL: the directory ${directory} of the SQLite file cannot be created (${reason(error)})`,
    );
  }
  for (const [what, target] of [
    ['directory', directory],
    ['file', file],
  ] as const) {
    if (what === 'file' && !existsSync(file)) continue;
    try {
      accessSync(target, constants.R_OK | constants.W_OK);
    } catch (error) {
      throw new DatabaseLocationError(
        `DATABASE_URL: the SQLite ${what} ${target} is not writable by this process (${reason(error)})`,
      );
    }
  }
}

function openSqlite(path: string, options: DatabaseOptions): Db {
  const memory = path === ':memory:' || path === '';
  if (!memory) checkSqliteLocation(path, options.createDirectory ?? false);
  let database: SQLite.Database;
  try {
    database = new SQLite(memory ? ':memory:' : path);
    database.pragma('journal_mode = WAL');
  } catch (error) {
    throw new DatabaseLocationError(
      `DATABASE_URL: the SQLite file ${resolve(path)} cannot be opened (${(error as Error).message})`,
    );
  }
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  const checkpointer = memory ? null : sqliteCheckpoints(database, path, options);
  // Kysely prepares every query anew; better-sqlite3 statements are reusable, so keep them.
  const statements = new LRUCache<string, SQLite.Statement>({ max: 1_000 });
  const cached = {
    close: () => database.close(),
    prepare(query: string) {
      let statement = statements.get(query);
      if (!statement) {
        statement = database.prepare(query);
        statements.set(query, statement);
      }
      // A look at the log's size every few transactions while no thread runs, else nothing.
      if (checkpointer?.waiting() && !statement.reader && !database.inTransaction) checkpointer.beforeWrite();
      return statement;
    },
  };
  const kysely = new Kysely<Database>({ dialect: new MigrationLockingSqliteDialect({ database: cached }) });
  return wrap(kysely, 'sqlite', memory ? 'sqlite (in memory)' : `sqlite:${path}`, undefined, async () => {
    await checkpointer?.stop();
  });
}

/**
 * A pool of connections to the database at `url`, in `schema` when given, whose statements are cancelled
 * after `statementTimeoutMs` when it is above 0. The settings are made with SET as each connection
 * opens (before its first query), rather than as start-up parameters, which poolers such as PgBouncer
 * refuse.
 */
function postgresPool(url: string, max: number, schema: string | undefined, statementTimeoutMs: number) {
  // A name in pg_stat_activity (the URL's `application_name` wins), to count an instance's connections.
  // Loaded only for a PostgreSQL URL: a SQLite service or command does not load the driver.
  const pg = createRequire(import.meta.url)('pg') as typeof import('pg');
  const pool = new pg.Pool({ connectionString: url, max, application_name: 'openvat' });
  const settings = [
    ...(schema ? [`SET search_path TO ${schema}`] : []),
    ...(statementTimeoutMs > 0 ? [`SET statement_timeout = ${Math.floor(statementTimeoutMs)}`] : []),
  ];
  if (settings.length > 0) {
    pool.on('connect', (client) => {
      client.query(settings.join('; ')).catch(() => {});
    });
  }
  return pool;
}

function openPostgres(url: string, options: DatabaseOptions): Db {
  if (options.schema && !/^[a-z_][a-z0-9_]*$/.test(options.schema))
    throw new Error(`Invalid schema name "${options.schema}"`);
  const statementTimeoutMs = options.statementTimeoutMs ?? 0;
  const pool = postgresPool(url, options.poolSize ?? 10, options.schema, statementTimeoutMs);
  // A connection the server ends emits `error`: on the pool while idle, on the client while a query
  // holds it (its query fails too, and the pool discards it on release). Without listeners either
  // would end the process, as an EventEmitter's unhandled `error` does.
  const connectionError = (error: Error) => options.onConnectionError?.(error);
  pool.on('error', connectionError);
  pool.on('connect', (client) => client.on('error', connectionError));
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const safe = new URL(url);
  safe.password = '';
  // Migrations go through a connection without the statement timeout.
  const forMigrations =
    statementTimeoutMs > 0
      ? () =>
          new Kysely<Database>({
            dialect: new PostgresDialect({ pool: postgresPool(url, 1, options.schema, 0) }),
          })
      : undefined;
  return wrap(
    kysely,
    'postgres',
    `postgres://${safe.host}${safe.pathname}`,
    options.schema,
    async () => {},
    forMigrations,
  );
}

function wrap(
  kysely: Kysely<Database>,
  dialect: Dialect,
  describe: string,
  schema: string | undefined,
  beforeClose: () => Promise<void>,
  forMigrations?: () => Kysely<Database>,
): Db {
  return {
    kysely,
    dialect,
    describe,
    exclusively,
    async migrate() {
      const migrating = forMigrations?.();
      try {
        await migrateWith(migrating ?? kysely);
      } finally {
        await migrating?.destroy();
      }
    },
    async ping() {
      try {
        await sql`SELECT 1`.execute(kysely);
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      await beforeClose();
      await kysely.destroy();
    },
  };

  async function exclusively<T>(name: string, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    if (dialect === 'postgres') {
      return kysely.transaction().execute(async (trx) => {
        // Advisory locks are the database's, not a schema's: the schema is part of the lock's name.
        await sql`SELECT pg_advisory_xact_lock(hashtext(current_schema() || ${`:${name}`}))`.execute(trx);
        return work(trx);
      });
    }
    // SQLite: the one connection, with the write lock from the start (a deferred transaction would
    // read first and then fail to write once another process had written meanwhile).
    return kysely.connection().execute(async (connection) => {
      await sql`BEGIN IMMEDIATE`.execute(connection);
      let result: T;
      try {
        result = await work(connection);
      } catch (error) {
        await sql`ROLLBACK`.execute(connection).catch(() => {});
        throw error;
      }
      await sql`COMMIT`.execute(connection);
      return result;
    });
  }

  async function migrateWith(kysely: Kysely<Database>): Promise<void> {
    if (schema) await sql`CREATE SCHEMA IF NOT EXISTS ${sql.id(schema)}`.execute(kysely);
    // On PostgreSQL the migration tables are looked for in the schema the tables go to (the first
    // of the search path): the migrator otherwise finds them in any schema of the database (another
    // application's, another instance's), skips creating its own, and then cannot use them.
    const unusable = (error: unknown) =>
      new Error(
        `DATABASE_URL: the database at ${describe} cannot be used: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    let tableSchema = schema;
    if (!tableSchema && dialect === 'postgres') {
      try {
        tableSchema = (await sql<{ name: string }>`SELECT current_schema() AS name`.execute(kysely)).rows[0]
          ?.name;
      } catch (error) {
        throw unusable(error);
      }
    }
    const applied = await appliedMigrations(kysely, tableSchema);
    // Every migration of this version applied already (every start but the first after an upgrade):
    // nothing to run, so neither the migrations' modules, nor the migrator's look-up of its tables,
    // nor its lock, which on SQLite is a write transaction and an fsync for a command that only reads.
    if (applied && MIGRATION_NAMES.every((name) => applied.includes(name))) return;
    const ours = await migrationProvider.getMigrations();
    const migrator = new Migrator({
      db: kysely,
      provider: withNewerMigrations(ours, applied),
      allowUnorderedMigrations: true,
      ...(tableSchema ? { migrationTableSchema: tableSchema } : {}),
    });
    let { error, results } = await migrator.migrateToLatest();
    // The migrator looks for its tables through an introspection of every schema of the database,
    // which fails ("schema/relation/column … does not exist") when another schema is dropped while
    // it runs (another application's, or a parallel test run's). Nothing has run then: try again.
    for (let attempt = 1; error && !results?.length && droppedMeanwhile(error) && attempt < 10; attempt++) {
      ({ error, results } = await migrator.migrateToLatest());
    }
    if (error) {
      const failed = results?.find((r) => r.status === 'Error');
      // No migration ran at all: the database did not answer (or refused the connection).
      if (!failed) throw unusable(error);
      throw new Error(`Migration ${failed.migrationName} failed: ${String(error)}`, { cause: error });
    }
  }
}

/** The names of the migrations applied to the database; null without a migration table to read. */
async function appliedMigrations(
  kysely: Kysely<Database>,
  tableSchema: string | undefined,
): Promise<string[] | null> {
  const table = tableSchema ? sql.id(tableSchema, 'kysely_migration') : sql.id('kysely_migration');
  try {
    return (await sql<{ name: string }>`SELECT name FROM ${table}`.execute(kysely)).rows.map((r) => r.name);
  } catch {
    // No migration table yet (a new database), or one the migrator reports on itself.
    return null;
  }
}

/**
 * Our migrations, and those a newer version applied to this database as done: a release's migrations
 * are additive, so the previous version runs on the upgraded schema (rolling upgrades, rollback).
 * Without them the migrator would refuse to start, the applied migrations not being its own.
 */
function withNewerMigrations(ours: Record<string, Migration>, applied: string[] | null): MigrationProvider {
  if (applied === null) return migrationProvider;
  const newer = applied.filter((name) => !(name in ours));
  if (newer.length === 0) return migrationProvider;
  const done: Migration = { up: async () => {} };
  return {
    getMigrations: async () => ({ ...ours, ...Object.fromEntries(newer.map((name) => [name, done])) }),
  };
}

/**
 * Whether `error` is what PostgreSQL's catalog functions raise for an object dropped while a query
 * reads the catalog: a schema (3F000), a table (42P01) or a column (42703) that no longer exists, or
 * an internal error (XX000) "cache lookup failed for namespace/relation …" when the object went
 * between the catalog scan and the look-up of its row.
 */
function droppedMeanwhile(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code === 'XX000') return typeof message === 'string' && message.startsWith('cache lookup failed for ');
  return code === '3F000' || code === '42P01' || code === '42703';
}
