import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { startCheckpointer } from '../../src/db/checkpointer.js';
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

  it('checkpoints as SQLite does by default with checkpointMs 0, and in memory', async () => {
    const inline = createDatabase(`sqlite:${join(dir, 'inline.sqlite')}`, { checkpointMs: 0 });
    assert.equal(await threshold(inline), 1_000);
    await inline.close();
    const memory = createDatabase('sqlite::memory:');
    assert.equal(await threshold(memory), 1_000);
    await memory.close();
  });
});
