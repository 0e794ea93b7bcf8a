import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { checkpointerOnDemand, startCheckpointer, TRANSACTIONS_PER_LOOK } from '../../src/db/checkpointer.js';
import { createDatabase } from '../../src/db/database.js';

const dir = mkdtempSync(join(tmpdir(), 'openvat-checkpoint-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A database file whose own connection never checkpoints, with `rows` rows of 1 KB written to its log. */
function writerWithLog(name: string, rows: number) {
  const path = join(dir, name);
  const writer = new SQLite(path);
  writer.pragma('journal_mode = WAL');
  writer.pragma('wal_autocheckpoint = 0');
  writer.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  const insert = writer.prepare('INSERT INTO t (body) VALUES (?)');
  writer.transaction(() => {
    for (let i = 0; i < rows; i++) insert.run(`${i}`.padEnd(1024, 'x'));
  })();
  return { path, writer };
}

async function waitFor<T>(what: string, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('the SQLite checkpoint thread', () => {
  it('copies the log into the database file while the writer never checkpoints', async () => {
    const { path, writer } = writerWithLog('copies.sqlite', 2_000);
    const before = statSync(path).size;
    const seen: Array<{ log: number; checkpointed: number }> = [];
    const checkpointer = startCheckpointer(path, {
      intervalMs: 20,
      onCheckpoint: (result) => seen.push(result),
      onFailure: (error) => assert.fail(String(error)),
    });
    try {
      const done = await waitFor('a complete checkpoint', () =>
        seen.find((r) => r.log > 0 && r.checkpointed === r.log),
      );
      // 2,000 rows of 1 KB are about 500 pages of 4 KB; all of them are now in the database file.
      assert.ok(done.log >= 500, `log of ${done.log} frames`);
      assert.ok(statSync(path).size >= before + 2_000 * 1024, 'the rows reached the database file');
      const reader = new SQLite(path, { readonly: true });
      assert.equal((reader.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n, 2_000);
      reader.close();
    } finally {
      await checkpointer.stop();
      writer.close();
    }
  });

  it('closes its connection when stopped, so the last close removes the log', async () => {
    const { path, writer } = writerWithLog('stops.sqlite', 10);
    const checkpointer = startCheckpointer(path, {
      intervalMs: 20,
      onFailure: (e) => assert.fail(String(e)),
    });
    await checkpointer.stop();
    await checkpointer.stop(); // twice is harmless
    writer.close();
    assert.equal(existsSync(`${path}-wal`), false);
  });

  it('reports a thread that cannot open its database', async () => {
    const failures: unknown[] = [];
    const checkpointer = startCheckpointer(join(dir, 'missing', 'nothing.sqlite'), {
      intervalMs: 20,
      onFailure: (error) => failures.push(error),
    });
    await waitFor('the failure', () => (failures.length > 0 ? failures : undefined));
    await checkpointer.stop();
    assert.match(String(failures[0]), /unable to open|SQLITE_CANTOPEN|exit code|directory does not exist/i);
  });

  it('on demand: starts once the log file is past its size, and not again after it failed', async () => {
    // A log of 2 MB beside no database: the thread starts, and fails to open the database.
    const path = join(dir, 'on-demand-fails.sqlite');
    const starts: number[] = [];
    const failures: unknown[] = [];
    const checkpointer = checkpointerOnDemand(path, {
      intervalMs: 20,
      startAtBytes: 1024 * 1024,
      onStart: () => starts.push(1),
      onFailure: (error) => failures.push(error),
    });
    writeFileSync(`${path}-wal`, Buffer.alloc(512 * 1024));
    for (let i = 0; i < 3 * TRANSACTIONS_PER_LOOK; i++) checkpointer.beforeWrite();
    assert.equal(starts.length, 0, 'a log below the size starts nothing');
    writeFileSync(`${path}-wal`, Buffer.alloc(2 * 1024 * 1024));
    for (let i = 0; i < TRANSACTIONS_PER_LOOK; i++) checkpointer.beforeWrite();
    assert.equal(starts.length, 1, 'the next look starts the thread');
    await waitFor('the failure', () => (failures.length > 0 ? failures : undefined));
    for (let i = 0; i < 3 * TRANSACTIONS_PER_LOOK; i++) checkpointer.beforeWrite();
    await checkpointer.stop();
    assert.equal(starts.length, 1, 'a failed thread is not started again');
    assert.equal(failures.length, 1, 'the failure is told once');
  });
});

describe('createDatabase on a SQLite file', () => {
  const threshold = async (db: ReturnType<typeof createDatabase>) =>
    Number(
      Object.values(
        (await sql<Record<string, number>>`PRAGMA wal_autocheckpoint`.execute(db.kysely)).rows[0] ?? {},
      )[0],
    );

  it('leaves checkpoints to its thread, with a higher bound of its own, and cleans up on close', async () => {
    const path = join(dir, 'service.sqlite');
    const db = createDatabase(`sqlite:${path}`);
    await db.migrate();
    assert.equal(await threshold(db), 10_000);
    await db.close();
    assert.equal(existsSync(`${path}-wal`), false, 'the log is removed by the last close');
  });

  /** About 6 MB, 1,500 pages of 4 KB, in one transaction: past 1,000 pages, below the writer's 10,000. */
  const bulkWrite = (db: ReturnType<typeof createDatabase>) =>
    sql`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6000)
      INSERT INTO t (body) SELECT hex(randomblob(512)) FROM n`.execute(db.kysely);

  /** `count` transactions of one small row each, through the service's connection. */
  async function smallWrites(db: ReturnType<typeof createDatabase>, count: number) {
    for (let i = 0; i < count; i++) await sql`INSERT INTO t (body) VALUES (${`row ${i}`})`.execute(db.kysely);
  }

  it("starts no checkpoint thread while the log stays below the writer's usual threshold", async () => {
    const path = join(dir, 'quiet.sqlite');
    let started = 0;
    const db = createDatabase(`sqlite:${path}`, { onCheckpointThread: () => started++ });
    await db.migrate();
    await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`.execute(db.kysely);
    await smallWrites(db, 3 * TRANSACTIONS_PER_LOOK);
    assert.equal(started, 0);
    assert.ok(statSync(`${path}-wal`).size > 0, 'the writes are in the log');
    assert.equal(await threshold(db), 10_000, 'the writer keeps its higher bound meanwhile');
    await db.close();
    assert.equal(existsSync(`${path}-wal`), false, 'the log is removed by the last close');
  });

  it('starts the thread once the log passes 1,000 pages; it checkpoints, and close still removes the log', async () => {
    const path = join(dir, 'busy.sqlite');
    let started = 0;
    const db = createDatabase(`sqlite:${path}`, { onCheckpointThread: () => started++ });
    await db.migrate();
    await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`.execute(db.kysely);
    await bulkWrite(db);
    assert.ok(statSync(path).size < 1024 * 1024, 'nothing was checkpointed into the database file yet');
    await smallWrites(db, TRANSACTIONS_PER_LOOK);
    assert.equal(started, 1, 'a look at the log within the next transactions starts the thread');
    await waitFor('the rows in the database file', () =>
      statSync(path).size >= 6_000 * 1024 ? true : undefined,
    );
    await smallWrites(db, 3 * TRANSACTIONS_PER_LOOK);
    assert.equal(started, 1, 'one thread');
    assert.equal(await threshold(db), 10_000);
    await db.close();
    assert.equal(existsSync(`${path}-wal`), false, 'the log is removed by the last close');
  });

  it('stops the thread after a quiet spell, and starts it again once the log has grown again', async () => {
    const path = join(dir, 'spells.sqlite');
    const events: string[] = [];
    const db = createDatabase(`sqlite:${path}`, {
      checkpointMs: 10,
      checkpointQuietMs: 50,
      onCheckpointThread: (event) => events.push(event),
    });
    await db.migrate();
    await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`.execute(db.kysely);
    await bulkWrite(db);
    await smallWrites(db, TRANSACTIONS_PER_LOOK);
    assert.equal(events[0], 'started');
    await waitFor('the quiet stop', () => (events.length === 2 ? true : undefined));
    assert.deepEqual(events, ['started', 'stopped']);
    // The log starts over with the next write, its file cut to that write's frames.
    await smallWrites(db, 3 * TRANSACTIONS_PER_LOOK);
    assert.deepEqual(events, ['started', 'stopped'], 'small writes start no thread');
    assert.ok(statSync(`${path}-wal`).size < 1024 * 1024, 'the log file was cut as it started over');
    await bulkWrite(db);
    await smallWrites(db, TRANSACTIONS_PER_LOOK);
    assert.deepEqual(events.slice(0, 3), ['started', 'stopped', 'started']);
    await db.close();
    assert.equal(existsSync(`${path}-wal`), false, 'the log is removed by the last close');
  });

  it('checkpoints as SQLite does by default with checkpointMs 0, and in memory', async () => {
    const inline = createDatabase(`sqlite:${join(dir, 'inline.sqlite')}`, { checkpointMs: 0 });
    assert.equal(await threshold(inline), 1_000);
    await inline.close();
    const memory = createDatabase('sqlite::memory:');
    assert.equal(await threshold(memory), 1_000);
    await memory.close();
  });
});
