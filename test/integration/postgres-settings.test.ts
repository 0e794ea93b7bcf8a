import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { type Container, createContainer } from '../../src/container.js';
import { createDatabase } from '../../src/db/database.js';
import { databaseTargets } from '../helpers/db.js';
import { postgresName } from '../helpers/resources.js';

const postgres = (await databaseTargets()).find((target) => target.name === 'postgres');
const skip = postgres?.skip ?? 'no PostgreSQL target';

/** The test server's URL with the connections' search path set to `schema` (as an operator may). */
function urlInSchema(schema: string): string {
  const url = new URL(process.env.TEST_DATABASE_URL as string);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

describe('PostgreSQL settings', { skip }, () => {
  const schema = postgresName('settings');
  let admin: pg.Client;
  let container: Container;

  before(async () => {
    admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const config = loadConfig({
      DATABASE_URL: urlInSchema(schema),
      LOG_LEVEL: 'silent',
      OPENVAT_PG_POOL_SIZE: '3',
      OPENVAT_PG_STATEMENT_TIMEOUT_MS: '300',
      OPENVAT_STATUS_POLL_MS: '0',
    });
    container = await createContainer(config, { log: pino({ level: 'silent' }) });
  });
  after(async () => {
    await container?.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it('OPENVAT_PG_STATEMENT_TIMEOUT_MS: a longer statement through the service database is cancelled', async () => {
    await assert.rejects(
      sql`SELECT pg_sleep(5)`.execute(container.db.kysely),
      /canceling statement due to statement timeout/,
    );
    // The connection stays usable, and the setting is the configured one on every connection.
    const shown = await Promise.all(
      Array.from({ length: 6 }, () =>
        sql<{ statement_timeout: string }>`SHOW statement_timeout`.execute(container.db.kysely),
      ),
    );
    assert.deepEqual(new Set(shown.map((r) => r.rows[0]?.statement_timeout)), new Set(['300ms']));
    // The migrations were applied in the schema the URL names (they are not bound by the timeout).
    const tables = await admin.query(
      `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'api_keys'`,
      [schema],
    );
    assert.equal(tables.rows[0].n, 1);
  });

  it('OPENVAT_PG_POOL_SIZE: the service opens at most that many connections', async () => {
    // Eight statements at once, each holding its connection a moment: the pool opens three and queues the rest.
    const pids = await Promise.all(
      Array.from({ length: 8 }, () =>
        sql<{ pid: number }>`SELECT pg_backend_pid() AS pid, pg_sleep(0.1)`.execute(container.db.kysely),
      ),
    );
    assert.equal(new Set(pids.map((r) => r.rows[0]?.pid)).size, 3);
    // They are named openvat in pg_stat_activity, where an operator counts them.
    const named = await admin.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'openvat' AND pid = ANY($1)`,
      [pids.map((r) => r.rows[0]?.pid)],
    );
    assert.equal(named.rows[0].n, 3);
  });

  it('without a statement timeout a statement runs to its end; migrations ignore the timeout', async () => {
    const db = createDatabase(urlInSchema(schema), { statementTimeoutMs: 0, poolSize: 1 });
    try {
      const res = await sql<{ t: string }>`SELECT pg_sleep(0.5)::text AS t`.execute(db.kysely);
      assert.equal(res.rows.length, 1);
    } finally {
      await db.close();
    }
    const bound = createDatabase(urlInSchema(schema), { statementTimeoutMs: 1, poolSize: 2 });
    try {
      await bound.migrate();
      await assert.rejects(sql`SELECT pg_sleep(1)`.execute(bound.kysely), /statement timeout/);
    } finally {
      await bound.close();
    }
  });

  it('sslmode in DATABASE_URL is honoured: a server without TLS is refused with a clear error', async () => {
    const url = new URL(process.env.TEST_DATABASE_URL as string);
    url.searchParams.set('sslmode', 'verify-full');
    const ssl = await admin.query('SHOW ssl');
    if (ssl.rows[0].ssl === 'on') return; // this server speaks TLS; the refusal cannot be shown here
    const db = createDatabase(url.toString());
    try {
      await assert.rejects(db.migrate(), /cannot be used: The server does not support SSL connections/);
    } finally {
      await db.close();
    }
  });
});
