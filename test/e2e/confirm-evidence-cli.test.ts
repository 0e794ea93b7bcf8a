import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildTestApp } from '../helpers/app.js';
import { builtCli } from '../helpers/cli.js';

/** `openvat evidence verify` as an operator runs it: a separate process on the same DATABASE_URL. */
describe('openvat evidence verify', () => {
  let dir: string;
  let databaseUrl: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-evidence-'));
    databaseUrl = `sqlite:${join(dir, 'openvat.sqlite')}`;
    const t = await buildTestApp({ DATABASE_URL: databaseUrl });
    try {
      const key = await t.key('business', 'test', { defaultRequesterVat: 'DE136695976' });
      for (const vat of ['ATU12345678', 'ATU88881111', 'ATU99992001']) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/confirm',
          headers: key.headers,
          payload: { vat_number: vat, company: { name: 'Beispiel GmbH', town: 'Wien' } },
        });
        assert.equal(res.statusCode, 200, res.body);
      }
    } finally {
      await t.close();
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function verify(...args: string[]) {
    return spawnSync(process.execPath, [...builtCli, 'evidence', 'verify', ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
      encoding: 'utf8',
    });
  }

  async function sql(run: (db: import('../../src/db/database.js').Db) => Promise<unknown>) {
    const { createDatabase } = await import('../../src/db/database.js');
    const db = createDatabase(databaseUrl);
    try {
      await run(db);
    } finally {
      await db.close();
    }
  }

  it('exits 0 and says OK for an intact chain', () => {
    const result = verify();
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^OK: 3 confirmations, chain intact up to seq 3/);
    const json = verify('--json');
    assert.equal(json.status, 0);
    assert.equal(JSON.parse(json.stdout).ok, true);
  });

  it('exits 1 and names the seq of an edited row', async () => {
    await sql((db) =>
      db.kysely
        .updateTable('confirmations')
        .set({ requester_vat_number: 'DE999999999' })
        .where('seq', '=', 2)
        .execute(),
    );
    const result = verify();
    assert.equal(result.status, 1);
    assert.match(result.stdout, /BROKEN at seq 2: .*hash_mismatch/);
    const json = JSON.parse(verify('--json').stdout);
    assert.equal(json.ok, false);
    assert.equal(json.seq, 2);
  });

  it('exits 1 and names the seq of a deleted row', async () => {
    await sql((db) => db.kysely.deleteFrom('confirmations').where('seq', '=', 1).execute());
    const result = verify();
    assert.equal(result.status, 1);
    assert.match(result.stdout, /BROKEN at seq 1: confirmation seq 1 is missing/);
  });
});
