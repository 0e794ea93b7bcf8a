import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createDatabase, type Db } from '../../src/db/database.js';
import { postgresName, templateDatabaseName, testRun } from './resources.js';

export interface DatabaseTarget {
  name: 'sqlite' | 'postgres';
  /** A reason to skip, or false when the target is usable. */
  skip: string | false;
  /** Opens a fresh, migrated, empty database (SQLite in memory; a new PostgreSQL database). */
  open(): Promise<TestDb>;
}

export interface TestDb extends Db {
  /** Closes and, for PostgreSQL, drops the database. */
  dispose(): Promise<void>;
}

let postgresProbe: Promise<string | false> | undefined;

/** Whether TEST_DATABASE_URL names a PostgreSQL server that answers; a reason to skip otherwise. */
function probePostgres(): Promise<string | false> {
  postgresProbe ??= (async () => {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) return 'TEST_DATABASE_URL is not set';
    if (url === 'off') return 'TEST_DATABASE_URL=off';
    // A server that is not there refuses at once; one that is there may be slow to accept under a
    // whole suite's load, so the wait is long.
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 30_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return false;
    } catch (error) {
      return `PostgreSQL at TEST_DATABASE_URL does not answer (${(error as Error).message})`;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return postgresProbe;
}

const noticed = new Set<string>();

/**
 * SQLite always; PostgreSQL when TEST_DATABASE_URL answers (otherwise skipped with a printed notice,
 * or, with `CI=true`, an error: CI never skips the PostgreSQL suites silently).
 */
export async function databaseTargets(): Promise<DatabaseTarget[]> {
  const pgSkip = await probePostgres();
  if (pgSkip && process.env.CI === 'true') {
    throw new Error(`CI=true requires PostgreSQL, but ${pgSkip}: start it or unset CI to skip these tests.`);
  }
  if (pgSkip && !noticed.has(pgSkip)) {
    noticed.add(pgSkip);
    console.log(`# notice: PostgreSQL tests skipped: ${pgSkip}`);
  }
  return [
    {
      name: 'sqlite',
      skip: false,
      async open() {
        const db = createDatabase('sqlite::memory:');
        await db.migrate();
        return { ...db, dispose: () => db.close() };
      },
    },
    {
      name: 'postgres',
      skip: pgSkip,
      async open() {
        const admin = process.env.TEST_DATABASE_URL as string;
        const name = postgresName('db');
        await createTestDatabase(admin, name);
        const db = createDatabase(databaseUrl(admin, name), { poolSize: 4 });
        // A copy of the run's template is migrated already; without a run, each database is migrated.
        if (testRun === 'local') await db.migrate();
        return {
          ...db,
          async dispose() {
            await db.close();
            await onAdmin(admin, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
          },
        };
      },
    },
  ];
}

/** The URL of database `name` on the server of `url`. */
export function databaseUrl(url: string, name: string): string {
  const out = new URL(url);
  out.pathname = `/${name}`;
  return out.toString();
}

async function onAdmin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

let template: Promise<string> | undefined;

/**
 * The run's template database, migrated once for the whole run: the first test process to need it
 * makes it under an advisory lock, and marks it a template when its migrations are done (a
 * half-made one, from a process that died meanwhile, is made again). scripts/run-tests.mjs drops it
 * at the end of the run.
 */
function runTemplate(url: string): Promise<string> {
  template ??= onAdmin(url, async (client) => {
    const name = templateDatabaseName();
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    try {
      const { rows } = await client.query<{ ready: boolean }>(
        'SELECT datistemplate AS ready FROM pg_database WHERE datname = $1',
        [name],
      );
      if (rows[0]?.ready) return name;
      if (rows[0]) await client.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await client.query(`CREATE DATABASE ${name}`);
      const db = createDatabase(databaseUrl(url, name), { poolSize: 1 });
      try {
        await db.migrate();
      } finally {
        await db.close();
      }
      await client.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE true`);
      return name;
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
    }
  });
  return template;
}

/** Creates database `name`: a copy of the run's template, or (without a run) an empty one. */
export async function createTestDatabase(url: string, name: string): Promise<void> {
  if (testRun === 'local') {
    await onAdmin(url, (client) => client.query(`CREATE DATABASE ${name}`));
    return;
  }
  const source = await runTemplate(url);
  // Two copies of one template at the same moment: PostgreSQL refuses the second while the first
  // reads the template ("source database … is being accessed by other users", 55006); it is retried.
  for (let attempt = 1; ; attempt += 1) {
    try {
      await onAdmin(url, (client) => client.query(`CREATE DATABASE ${name} TEMPLATE ${source}`));
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== '55006' || attempt >= 50) throw error;
      await sleep(20 * attempt);
    }
  }
}
