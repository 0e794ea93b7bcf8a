// The durable floor: a bare `node:http` server that answers with fixed bytes (BODY, HEADERS) only
// after it has committed an audit record of them, as the service must, and does nothing else: no
// framework, no key, no validation, no serialisation. Records of the requests that arrive while
// a commit runs are written together in one transaction (as the service's outbox groups them), with
// one prepared statement per group size, into the service's own `audits` table (created by the
// service's migrations) on SQLite with the service's settings and its checkpoint thread.
//
// WRITER=thread moves the inserts and commits to a worker thread with a connection of its own; the
// event loop hands each group over and answers when the thread reports the commit.
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

const dir = mkdtempSync(join(tmpdir(), 'openvat-floor-'));
const path = join(dir, 'floor.sqlite');
const schema = createDatabase(`sqlite:${path}`, { checkpointMs: 0 });
await schema.migrate();
await schema.close();

const COLUMNS = 10;
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
      insert = db.prepare('INSERT INTO audits (request_id, key_id, endpoint, response, request_body, created_at, expires_at, latency_ms, status_code, valid) VALUES ' + Array(rows).fill(row).join(','));
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

const checkpointer = startCheckpointer(path, {
  intervalMs: 100,
  onFailure: (error) => {
    console.error(error);
    process.exit(1);
  },
});

/** Commits a group's values, then calls back; on the event loop or on the thread. */
let commitGroup: (values: unknown[], done: () => void) => void;
if (writer === 'event-loop') {
  const writerOf = new Function(`return ${GROUP_WRITER.trim()}`)() as (
    db: SQLite.Database,
  ) => (values: unknown[]) => void;
  const write = writerOf(new SQLite(path));
  commitGroup = (values, done) => {
    write(values);
    done();
  };
} else {
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
  thread.on('error', (error) => {
    console.error(error);
    process.exit(1);
  });
  commitGroup = (values, done) => {
    const id = next++;
    waiting.set(id, done);
    thread.postMessage({ id, values });
  };
}

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
  commitGroup(values, () => {
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
  void checkpointer.stop().then(() => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
});
