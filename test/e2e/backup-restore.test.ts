import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import SQLite from 'better-sqlite3';
import { builtCli } from '../helpers/cli.js';
import { createKeyIn, createKillableService, type KillableService } from '../helpers/processes.js';

const CLI = builtCli;

function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...CLI, ...args],
      { env: { ...process.env, LOG_LEVEL: 'silent', ...env } },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** The request ids of the audit records in a SQLite file. */
function auditIds(file: string): Set<string> {
  const db = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    return new Set(
      (db.prepare('SELECT request_id FROM audits').all() as Array<{ request_id: string }>).map(
        (r) => r.request_id,
      ),
    );
  } finally {
    db.close();
  }
}

describe('openvat backup and restore on SQLite, with the service writing meanwhile', () => {
  let service: KillableService;
  let file: string;
  let env: Record<string, string>;
  let work: string;

  before(async () => {
    service = await createKillableService('backup', {});
    file = service.databaseUrl.slice('sqlite:'.length);
    env = { DATABASE_URL: service.databaseUrl };
    work = mkdtempSync(join(tmpdir(), 'openvat-backups-'));
  });
  after(async () => {
    await service.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('a backup taken under writes holds every answer sent before it began; restore needs the service stopped and puts it back', async () => {
    const testKey = createKeyIn(service.databaseUrl, 'test');
    const url = await service.start();
    const answered: string[] = [];
    let writing = true;
    // Test-key validations: each answer is sent once its audit record is committed.
    const writers = Array.from({ length: 4 }, async () => {
      while (writing) {
        const res = await fetch(`${url}/v1/validate?vat_number=DE100000008`, {
          headers: { authorization: `Bearer ${testKey}` },
        });
        const body = (await res.json()) as { meta: { request_id: string } };
        assert.equal(res.status, 200);
        answered.push(body.meta.request_id);
      }
    });
    while (answered.length < 50) await sleep(10);

    const backupFile = join(work, 'openvat-1.sqlite');
    const before = [...answered];
    const backedUp = await cli(['backup', '--out', backupFile], env);
    const sentDuringBackup = answered.length - before.length;
    assert.equal(backedUp.code, 0, backedUp.stderr);
    assert.match(
      backedUp.stdout,
      /^backed up .*openvat\.sqlite to .*openvat-1\.sqlite \(\d+ pages, \d+ bytes, integrity ok\)\n$/,
    );
    assert.deepEqual(readdirSync(work), ['openvat-1.sqlite'], 'no partial file is left');
    const inBackup = auditIds(backupFile);
    assert.deepEqual(
      before.filter((id) => !inBackup.has(id)),
      [],
      'every answer sent before the backup began is in it',
    );

    // A second backup never overwrites the first.
    const again = await cli(['backup', '--out', backupFile], env);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /^openvat: .*openvat-1\.sqlite exists; a backup never overwrites a file\n$/);

    // While the service runs, restore refuses and changes nothing.
    const whileRunning = await cli(['restore', backupFile], env);
    assert.equal(whileRunning.code, 2, whileRunning.stderr);
    assert.match(
      whileRunning.stderr,
      /^openvat: .*openvat\.sqlite is in use \(is openvat serve running on it\?\): stop the service, then restore\n$/,
    );
    while (answered.length < before.length + sentDuringBackup + 20) await sleep(10);
    writing = false;
    await Promise.all(writers);
    await service.stop('SIGTERM');
    const live = auditIds(file);
    assert.deepEqual(
      answered.filter((id) => !live.has(id)),
      [],
      'the service kept writing through the refused restore',
    );
    assert.ok(live.size > inBackup.size);

    // Files that are not openvat backups are refused, and the database is left as it is.
    const garbage = join(work, 'garbage.sqlite');
    writeFileSync(
      garbage,
      'not a database at all, just some text that is long enough to look like a file'.repeat(100),
    );
    const other = join(work, 'other.sqlite');
    const otherDb = new SQLite(other);
    otherDb.exec('CREATE TABLE notes (text TEXT)');
    otherDb.close();
    for (const [path, reason] of [
      [garbage, /it is not a SQLite database|cannot be read as a database/],
      [other, /it is not an openvat database \(it has no migration table\)/],
      [join(work, 'missing.sqlite'), /no backup at/],
    ] as const) {
      const refused = await cli(['restore', path], env);
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, reason);
      assert.equal(refused.stderr.split('\n').filter(Boolean).length, 1, refused.stderr);
    }
    assert.deepEqual(auditIds(file), live, 'a refused restore changes nothing');

    const restored = await cli(['restore', backupFile], env);
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(
      restored.stdout,
      /^restored .*openvat-1\.sqlite into .*openvat\.sqlite\nthe database it replaced is kept at .*openvat\.sqlite\.replaced-/,
    );
    assert.deepEqual(auditIds(file), inBackup);
    const kept = readdirSync(dirname(file)).find((name) => name.startsWith('openvat.sqlite.replaced-'));
    assert.ok(kept);
    assert.deepEqual(auditIds(join(dirname(file), kept)), live, 'the replaced database is kept whole');

    // The service starts on the restored database, and its keys work.
    const again2 = await service.start();
    const res = await fetch(`${again2}/v1/validate?vat_number=DE100000008`, {
      headers: { authorization: `Bearer ${testKey}` },
    });
    assert.equal(res.status, 200);
    await service.stop('SIGTERM');
    assert.ok(existsSync(backupFile));
  });

  it('PostgreSQL is backed up with its own tools: both commands say so', async () => {
    for (const args of [
      ['backup', '--out', join(work, 'pg.sqlite')],
      ['restore', join(work, 'pg.sqlite')],
    ]) {
      const res = await cli(args, { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
      assert.equal(res.code, 2, res.stderr);
      assert.match(
        res.stderr,
        /works on a SQLite file; DATABASE_URL names PostgreSQL: use pg_dump and pg_restore/,
      );
    }
  });
});
