import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createDatabase, type Db } from '../../src/db/database.js';

export interface DatabaseTarget {
  name: 'sqlite' | 'postgres';
  /** A reason to skip, or false when the target is usable. */
  skip: string | false;
  /** Opens a fresh, migrated, empty database (SQLite in memory; a new PostgreSQL schema). */
  open(): Promise<TestDb>;
}

export interface TestDb extends Db {
  /** Closes and, for PostgreSQL, drops the schema. */
  dispose(): Promise<void>;
}

let postgresProbe: Promise<string | false> | undefined;

/** Whether TEST_DATABASE_URL names a PostgreSQL server that answers; a reason to skip otherwise. */
function probePostgres(): Promise<string | false> {
  postgresProbe ??= (async () => {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) return 'TEST_DATABASE_URL is not set';
    if (url === 'off') return 'TEST_DATABASE_URL=off';
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
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
        const url = process.env.TEST_DATABASE_URL as string;
        const schema = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
        const db = createDatabase(url, { schema, poolSize: 4 });
        await db.migrate();
        return {
          ...db,
          async dispose() {
            await db.close();
            const client = new pg.Client({ connectionString: url });
            await client.connect();
            await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
            await client.end();
          },
        };
      },
    },
  ];
}
