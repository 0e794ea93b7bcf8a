import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createDatabase } from '../../src/db/database.js';
import { databaseTargets } from '../helpers/db.js';
import { createKeyIn, migrateWithLiveKey, startServerProcess } from '../helpers/processes.js';
import { postgresName } from '../helpers/resources.js';

const postgres = (await databaseTargets()).find((target) => target.name === 'postgres');

/**
 * A TCP proxy in front of PostgreSQL that can be cut: `down()` ends every connection through it and
 * refuses new ones (as a server that is down does), `up()` lets them through again.
 */
async function pgProxy(
  target: URL,
): Promise<{ port: number; down(): void; up(): void; close(): Promise<void> }> {
  let open = true;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    if (!open) return client.destroy();
    const upstream = tcpConnect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    down() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    up() {
      open = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * PostgreSQL restarting (or failing over, or a pooler closing idle connections) ends every
 * connection the service holds. The pool drops them and the service answers again on new ones;
 * before, the pool's `error` event for an idle connection had no listener and ended the process.
 */
describe('PostgreSQL ends the service’s connections', {
  skip: postgres?.skip ?? 'no PostgreSQL target',
}, () => {
  const schema = postgresName('restart');
  const application = `openvat-restart-${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  let child: ChildProcess | null = null;

  before(async () => {
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
  });
  after(async () => {
    child?.kill('SIGKILL');
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it('keeps the service running, and it answers again on new connections', async () => {
    const url = new URL(process.env.TEST_DATABASE_URL as string);
    url.searchParams.set('options', `-c search_path=${schema}`);
    url.searchParams.set('application_name', application);
    const databaseUrl = url.toString();
    migrateWithLiveKey(databaseUrl);
    const key = createKeyIn(databaseUrl, 'test');
    const server = await startServerProcess({ DATABASE_URL: databaseUrl });
    child = server.child;
    const validate = async () => {
      const res = await fetch(`${server.url}/v1/validate?vat_number=DE100000008`, {
        headers: { authorization: `Bearer ${key}` },
      });
      return {
        status: res.status,
        id: ((await res.json()) as { meta: { request_id: string } }).meta.request_id,
      };
    };
    const before = await Promise.all(Array.from({ length: 8 }, validate));
    assert.deepEqual(
      before.map((r) => r.status),
      Array(8).fill(200),
    );

    const ended = await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
      [application],
    );
    assert.ok(ended.rowCount !== null && ended.rowCount > 0, 'the service held connections');
    await sleep(300);
    assert.equal(child.exitCode, null, 'the service is still running');
    assert.equal(child.signalCode, null);

    const afterwards = await Promise.all(Array.from({ length: 8 }, validate));
    assert.deepEqual(
      afterwards.map((r) => r.status),
      Array(8).fill(200),
    );
    const stored = await admin.query(`SELECT request_id FROM ${schema}.audits`);
    const ids = new Set(stored.rows.map((row: { request_id: string }) => row.request_id));
    for (const r of [...before, ...afterwards]) assert.ok(ids.has(r.id), `audit record of ${r.id}`);
  });

  it('while PostgreSQL cannot be reached, answers 503 in the error envelope with Retry-After; then 200 again', async () => {
    child?.kill('SIGKILL');
    const target = new URL(process.env.TEST_DATABASE_URL as string);
    const proxy = await pgProxy(target);
    try {
      const direct = new URL(target);
      direct.searchParams.set('options', `-c search_path=${schema}`);
      // Straight to PostgreSQL: the CLI runs synchronously, while the proxy lives in this process.
      const key = createKeyIn(direct.toString(), 'test');
      const url = new URL(direct);
      url.host = `127.0.0.1:${proxy.port}`;
      const server = await startServerProcess({ DATABASE_URL: url.toString() });
      child = server.child;
      const validate = () =>
        fetch(`${server.url}/v1/validate?vat_number=DE100000008`, {
          headers: { authorization: `Bearer ${key}` },
        });
      assert.equal((await validate()).status, 200);

      // Cut while queries are in flight: each answer is 200 or 503, and the process lives on.
      const inFlight = Array.from({ length: 30 }, validate);
      setImmediate(() => proxy.down());
      const statuses = new Set((await Promise.all(inFlight)).map((res) => res.status));
      for (const status of statuses) assert.ok(status === 200 || status === 503, `status ${status}`);
      assert.ok(statuses.has(503), 'some queries met the cut');
      assert.equal(child.exitCode, null, 'the service is still running');

      const refused = await validate();
      const body = (await refused.json()) as {
        error: { code: string; message: string };
        meta: { request_id: string };
      };
      assert.equal(refused.status, 503, JSON.stringify(body));
      assert.equal(refused.headers.get('retry-after'), '5');
      assert.equal(body.error.code, 'internal_error');
      assert.match(body.error.message, /cannot reach its database/);
      assert.equal(body.meta.request_id, refused.headers.get('service-request-id'));

      proxy.up();
      assert.equal((await validate()).status, 200, 'answers again once the database is back');
      assert.equal(child.exitCode, null);
    } finally {
      await proxy.close();
    }
  });

  it('migrates into the schema of its search path when another schema holds migration tables too', async () => {
    // Another application (or another openvat) migrated by the same library into a schema of its own.
    const other = `${schema}_other`;
    await admin.query(`CREATE SCHEMA ${other}`);
    await admin.query(
      `CREATE TABLE ${other}.kysely_migration (name varchar(255) PRIMARY KEY, timestamp varchar(255))`,
    );
    await admin.query(
      `CREATE TABLE ${other}.kysely_migration_lock (id varchar(255) PRIMARY KEY, is_locked integer)`,
    );
    const mine = `${schema}_mine`;
    await admin.query(`CREATE SCHEMA ${mine}`);
    try {
      const url = new URL(process.env.TEST_DATABASE_URL as string);
      url.searchParams.set('options', `-c search_path=${mine}`);
      const db = createDatabase(url.toString());
      try {
        await db.migrate();
      } finally {
        await db.close();
      }
      const tables = await admin.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('kysely_migration', 'audits')",
        [mine],
      );
      assert.equal(tables.rowCount, 2, 'its own migration table and its tables are in its schema');
    } finally {
      await admin.query(`DROP SCHEMA ${other} CASCADE`);
      await admin.query(`DROP SCHEMA ${mine} CASCADE`);
    }
  });
});
