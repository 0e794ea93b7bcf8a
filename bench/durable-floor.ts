// The durable floor: a bare `node:http` server that answers with fixed bytes (BODY, HEADERS) only
// after it has committed an audit record of them, as the service must, and does nothing else: no
// framework, no key, no validation, no serialisation. Records of the requests that arrive while
// a commit runs are written together (as the service's outbox groups them), with one prepared
// statement per group size, into the service's own `audits` table (created by the service's
// migrations).
//
// On SQLite (the default) in a file of its own, with the service's settings and its checkpoint
// thread, each group in one transaction. WRITER=thread moves the inserts and commits to a worker
// thread with a connection of its own; the event loop hands each group over and answers when the
// thread reports the commit.
//
// On PostgreSQL with DATABASE_URL=postgres://…, in a schema of its own in that database (created on
// start, dropped on SIGTERM), each group is one multi-row INSERT, atomic by itself: as the service
// writes a group of audit records alone (`needsTransaction` in src/db/group-commit.ts), without
// BEGIN and COMMIT around it. One connection: the service's outbox writes one group at a time
// (src/db/group-commit.ts), so of its pool (OPENVAT_PG_POOL_SIZE, 10) one connection at a time
// carries the request path's commits; a second would sit idle under this grouping. Event loop only.
//
// Started by bench/paid.ts, beside a bare server, as the most any design that keeps the durability
// rule (an answer leaves only after its record is committed) can reach on this machine.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { startCheckpointer } from '../src/db/checkpointer.js';
import { createDatabase } from '../src/db/database.js';
import { createIdGenerator } from '../src/lib/ids.js';

const body = Buffer.from(process.env.BODY ?? '{}');
const bodyText = body.toString();
const headers: Record<string, string | number> = {
  ...(JSON.parse(process.env.HEADERS ?? '{}') as Record<string, string>),
  'content-length': body.length,
};
const writer = process.env.WRITER === 'thread' ? 'thread' : 'event-loop';
const databaseUrl = process.env.DATABASE_URL ?? '';

const COLUMNS = 10;
const INSERT =
  'INSERT INTO audits (request_id, key_id, endpoint, response, request_body, created_at, expires_at, latency_ms, status_code, valid) VALUES ';
/** Writes one group on the connection it is given; the same code runs on the event loop or the thread. */
const GROUP_WRITER = `
(db) => {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('wal_autocheckpoint = 10000');
  const row = '(' + Array(${COLUMNS}).fill('?').join(',') + ')';
  const inserts = new Map();
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  return (values) => {
    const rows = values.length / ${COLUMNS};
    let insert = inserts.get(rows);
    if (!insert) {
      insert = db.prepare(${JSON.stringify(INSERT)} + Array(rows).fill(row).join(','));
      inserts.set(rows, insert);
    }
    begin.run();
    try {
      insert.run(values);
      commit.run();
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
  };
}`;

interface Store {
  /** Commits a group's values, then calls back; on the event loop or on the thread. */
  commitGroup(values: unknown[], done: () => void): void;
  /** Removes what the floor created. */
  close(): Promise<void>;
}

const fail = (error: unknown) => {
  console.error(error);
  process.exit(1);
};

async function onSqlite(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'openvat-floor-'));
  const path = join(dir, 'floor.sqlite');
  const schema = createDatabase(`sqlite:${path}`, { checkpointMs: 0 });
  await schema.migrate();
  await schema.close();
  const checkpointer = startCheckpointer(path, { intervalMs: 100, onFailure: fail });
  const close = async () => {
    await checkpointer.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  if (writer === 'event-loop') {
    const writerOf = new Function(`return ${GROUP_WRITER.trim()}`)() as (
      db: SQLite.Database,
    ) => (values: unknown[]) => void;
    const write = writerOf(new SQLite(path));
    return {
      commitGroup(values, done) {
        write(values);
        done();
      },
      close,
    };
  }
  const thread = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const write = (${GROUP_WRITER})(new (require(workerData.driver))(workerData.path));
     parentPort.on('message', ({ id, values }) => { write(values); parentPort.postMessage(id); });`,
    { eval: true, workerData: { path, driver: createRequire(import.meta.url).resolve('better-sqlite3') } },
  );
  const waiting = new Map<number, () => void>();
  let next = 0;
  thread.on('message', (id: number) => {
    const done = waiting.get(id);
    waiting.delete(id);
    done?.();
  });
  thread.on('error', fail);
  return {
    commitGroup(values, done) {
      const id = next++;
      waiting.set(id, done);
      thread.postMessage({ id, values });
    },
    close,
  };
}

async function onPostgres(url: string): Promise<Store> {
  if (writer === 'thread') throw new Error('WRITER=thread is for SQLite only');
  const schema = `openvat_floor_${process.pid}`;
  const tables = createDatabase(url, { schema });
  await tables.migrate();
  await tables.close();
  const client = new pg.Client({ connectionString: url, application_name: 'openvat-floor' });
  client.on('error', fail);
  await client.connect();
  await client.query(`SET search_path TO ${schema}`);
  /** One named (server-side prepared) statement per group size, as SQLite's prepared ones. */
  const inserts = new Map<number, string>();
  const insertOf = (rows: number) => {
    let text = inserts.get(rows);
    if (!text) {
      const row = (r: number) =>
        `(${Array.from({ length: COLUMNS }, (_, c) => `$${r * COLUMNS + c + 1}`).join(',')})`;
      text = INSERT + Array.from({ length: rows }, (_, r) => row(r)).join(',');
      inserts.set(rows, text);
    }
    return text;
  };
  return {
    commitGroup(values, done) {
      const rows = values.length / COLUMNS;
      client.query({ name: `audits_${rows}`, text: insertOf(rows), values }).then(() => done(), fail);
    },
    async close() {
      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.end();
    },
  };
}

const store = /^postgres(ql)?:\/\//.test(databaseUrl) ? await onPostgres(databaseUrl) : await onSqlite();

interface Pending {
  res: ServerResponse;
  request: string;
}
let pending: Pending[] = [];
let committing = false;
const DAY_MS = 86_400_000;
/** The service's request ids (UUID v7: time-ordered, so records append to the end of the primary key). */
const ids = createIdGenerator();

function flush() {
  if (committing || pending.length === 0) return;
  const group = pending;
  pending = [];
  committing = true;
  const now = Date.now();
  const createdAt = new Date(now).toISOString();
  const expiresAt = new Date(now + 365 * DAY_MS).toISOString();
  const values: unknown[] = [];
  for (const p of group) {
    values.push(ids.uuid(), 'key', 'validate', bodyText, p.request, createdAt, expiresAt, 0, 200, 1);
  }
  store.commitGroup(values, () => {
    committing = false;
    for (const p of group) {
      p.res.writeHead(200, headers);
      p.res.end(body);
    }
    if (pending.length > 0) setImmediate(flush);
  });
}

function answer(res: ServerResponse, request: string) {
  if (pending.length === 0) setImmediate(flush);
  pending.push({ res, request });
}

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  if (req.method === 'GET') return answer(res, JSON.stringify({ url: req.url }));
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => answer(res, Buffer.concat(chunks).toString()));
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  void store.close().then(() => process.exit(0), fail);
});
