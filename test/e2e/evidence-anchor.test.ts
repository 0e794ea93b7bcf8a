import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createDatabase, type Db } from '../../src/db/database.js';
import { hashRecord } from '../../src/modules/confirmations/chain.js';
import { buildTestApp } from '../helpers/app.js';
import { builtCli } from '../helpers/cli.js';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const PRIVATE_PEM = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
const PUBLIC_PEM = publicKey.export({ format: 'pem', type: 'spki' }).toString();

function cli(databaseUrl: string, args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [...builtCli, ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', OPENVAT_EVIDENCE_KEY: '', ...env },
    encoding: 'utf8',
  });
}

async function withDb(databaseUrl: string, run: (db: Db) => Promise<unknown>) {
  const db = createDatabase(databaseUrl);
  try {
    await run(db);
  } finally {
    await db.close();
  }
}

/** Stores `count` confirmations through the real app, with the evidence key set. */
async function confirm(databaseUrl: string, count: number) {
  const t = await buildTestApp({ DATABASE_URL: databaseUrl, OPENVAT_EVIDENCE_KEY: PRIVATE_PEM });
  try {
    const key = await t.key('business', 'test', { defaultRequesterVat: 'DE136695976' });
    for (let i = 0; i < count; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/confirm',
        headers: key.headers,
        payload: { vat_number: 'ATU12345678', company: { name: `Firma ${i}`, town: 'Wien' } },
      });
      assert.equal(res.statusCode, 200, res.body);
    }
  } finally {
    await t.close();
  }
}

/** The attack the hashes alone miss: edit a row, re-hash it and every later row, move the head along. */
async function rewriteFrom(db: Db, seq: number) {
  const rows = await db.kysely
    .selectFrom('confirmations')
    .selectAll()
    .where('seq', '>=', seq)
    .orderBy('seq')
    .execute();
  const before = await db.kysely
    .selectFrom('confirmations')
    .select('hash')
    .where('seq', '=', seq - 1)
    .executeTakeFirst();
  let prev = before?.hash ?? '0'.repeat(64);
  for (const row of rows) {
    const edited = {
      ...row,
      prev_hash: prev,
      requester_vat_number: row.seq === seq ? 'DE999999999' : row.requester_vat_number,
    };
    const hash = hashRecord(edited);
    await db.kysely
      .updateTable('confirmations')
      .set({ ...edited, hash })
      .where('id', '=', row.id)
      .execute();
    prev = hash;
  }
  await db.kysely.updateTable('confirmation_chain_head').set({ hash: prev }).where('id', '=', 1).execute();
}

describe('evidence chain anchored by a signed head (OPENVAT_EVIDENCE_KEY)', () => {
  let dir: string;
  let url: string;
  const key = { OPENVAT_EVIDENCE_KEY: PRIVATE_PEM };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-anchor-'));
    url = `sqlite:${join(dir, 'openvat.sqlite')}`;
    await confirm(url, 3);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('public-key prints the key that verifies; verify checks the head signature', () => {
    const printed = cli(url, ['evidence', 'public-key'], key);
    assert.equal(printed.status, 0, printed.stderr);
    assert.equal(printed.stdout, PUBLIC_PEM);
    const verified = cli(url, ['evidence', 'verify'], key);
    assert.equal(verified.status, 0, verified.stdout + verified.stderr);
    assert.match(verified.stdout, /^OK: 3 confirmations.*head signature valid/);
    const refused = cli(url, ['evidence', 'public-key']);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /OPENVAT_EVIDENCE_KEY is not set/);
  });

  it('a rewrite with every later row re-hashed passes the hashes, but not the signature nor an exported head', async () => {
    const headFile = join(dir, 'head-3.json');
    const exported = cli(url, ['evidence', 'export-head', '--out', headFile], key);
    assert.equal(exported.status, 0, exported.stderr);
    const head = JSON.parse(readFileSync(headFile, 'utf8'));
    assert.equal(head.seq, 3);
    assert.equal(head.public_key, PUBLIC_PEM);
    await confirm(url, 2);

    const copy = `sqlite:${join(dir, 'rewritten.sqlite')}`;
    copyFileSync(join(dir, 'openvat.sqlite'), join(dir, 'rewritten.sqlite'));
    await withDb(copy, (db) => rewriteFrom(db, 2));
    // The hash chain alone is consistent again: that was the gap.
    const hashesOnly = cli(copy, ['evidence', 'verify', '--json']);
    assert.equal(JSON.parse(hashesOnly.stdout).ok, true);

    const signed = cli(copy, ['evidence', 'verify', '--json'], key);
    assert.equal(signed.status, 1);
    assert.equal(JSON.parse(signed.stdout).reason, 'head_signature_invalid');

    // Elsewhere, with the public key only: the exported head pins seq 3, which the rewrite changed.
    const pubFile = join(dir, 'evidence.pub');
    writeFileSync(pubFile, PUBLIC_PEM);
    const pinned = cli(copy, ['evidence', 'verify', '--json', '--head', headFile, '--public-key', pubFile]);
    assert.equal(pinned.status, 1);
    const report = JSON.parse(pinned.stdout);
    assert.equal(report.reason, 'exported_head_mismatch');
    assert.equal(report.seq, 3);

    const original = cli(url, ['evidence', 'verify', '--head', headFile, '--public-key', pubFile]);
    assert.equal(original.status, 0, original.stdout);
    assert.match(original.stdout, /exported head seq 3 found unchanged/);
  });

  it('cutting the tail and moving the head back to an older signed head is caught by a later exported head', async () => {
    const headFile = join(dir, 'head-now.json');
    assert.equal(cli(url, ['evidence', 'export-head', '--out', headFile], key).status, 0);
    const now = JSON.parse(readFileSync(headFile, 'utf8'));
    assert.ok(now.seq >= 5);
    const older = JSON.parse(readFileSync(join(dir, 'head-3.json'), 'utf8'));

    const copy = `sqlite:${join(dir, 'cut.sqlite')}`;
    copyFileSync(join(dir, 'openvat.sqlite'), join(dir, 'cut.sqlite'));
    await withDb(copy, async (db) => {
      await db.kysely.deleteFrom('confirmations').where('seq', '>', 3).execute();
      // The strongest version: the head moved back carries the genuine signature of seq 3.
      await db.kysely
        .updateTable('confirmation_chain_head')
        .set({ seq: 3, hash: older.hash, signature: older.signature })
        .where('id', '=', 1)
        .execute();
    });
    assert.equal(cli(copy, ['evidence', 'verify'], key).status, 0, 'hashes and signature alone cannot tell');
    const pinned = cli(copy, ['evidence', 'verify', '--json', '--head', headFile], key);
    assert.equal(pinned.status, 1);
    assert.equal(JSON.parse(pinned.stdout).reason, 'rolled_back');
  });

  it('an exported head signed by another key, or a tampered one, is refused', () => {
    const other = generateKeyPairSync('ed25519')
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    const headFile = join(dir, 'head-3.json');
    const foreign = cli(url, ['evidence', 'verify', '--json', '--head', headFile], {
      OPENVAT_EVIDENCE_KEY: other,
    });
    assert.equal(foreign.status, 1);
    assert.equal(JSON.parse(foreign.stdout).reason, 'exported_head_invalid');
    const head = JSON.parse(readFileSync(headFile, 'utf8'));
    const forged = join(dir, 'forged.json');
    writeFileSync(forged, JSON.stringify({ ...head, seq: head.seq + 1 }));
    const result = cli(url, ['evidence', 'verify', '--json', '--head', forged], key);
    assert.equal(result.status, 1);
    assert.equal(JSON.parse(result.stdout).reason, 'exported_head_invalid');
  });

  it('export-head refuses to sign a broken chain', async () => {
    const copy = `sqlite:${join(dir, 'broken.sqlite')}`;
    copyFileSync(join(dir, 'openvat.sqlite'), join(dir, 'broken.sqlite'));
    await withDb(copy, (db) =>
      db.kysely
        .updateTable('confirmations')
        .set({ vat_number: 'ATU00000000' })
        .where('seq', '=', 2)
        .execute(),
    );
    const result = cli(copy, ['evidence', 'export-head'], key);
    assert.equal(result.status, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /BROKEN at seq 2/);
  });

  it('export-head never signs a head left without a signature; acknowledge does, after a review', async () => {
    const copy = `sqlite:${join(dir, 'unsigned.sqlite')}`;
    copyFileSync(join(dir, 'openvat.sqlite'), join(dir, 'unsigned.sqlite'));
    // The tail cut back and the signature removed: the chain alone is consistent.
    let head = { seq: 0, hash: '' };
    await withDb(copy, async (db) => {
      await db.kysely.deleteFrom('confirmations').where('seq', '>', 2).execute();
      const kept = await db.kysely
        .selectFrom('confirmations')
        .select('hash')
        .where('seq', '=', 2)
        .executeTakeFirstOrThrow();
      await db.kysely
        .updateTable('confirmation_chain_head')
        .set({ seq: 2, hash: kept.hash, signature: null })
        .where('id', '=', 1)
        .execute();
      head = { seq: 2, hash: kept.hash };
    });
    const exported = cli(copy, ['evidence', 'export-head'], key);
    assert.equal(exported.status, 1, exported.stdout);
    assert.equal(exported.stdout, '');
    assert.match(exported.stderr, /head_unsigned[\s\S]*openvat evidence acknowledge/);
    const still = cli(copy, ['evidence', 'verify', '--json'], key);
    assert.equal(JSON.parse(still.stdout).reason, 'head_unsigned', 'nothing was signed');

    const wrong = cli(
      copy,
      ['evidence', 'acknowledge', '--seq', '2', '--hash', 'a'.repeat(64), '--reason', 'reviewed'],
      key,
    );
    assert.equal(wrong.status, 1);
    assert.match(wrong.stderr, /nothing was acknowledged: the chain head is seq 2/);

    const acknowledged = cli(
      copy,
      ['evidence', 'acknowledge', '--seq', String(head.seq), '--hash', head.hash, '--reason', 'restored'],
      key,
    );
    assert.equal(acknowledged.status, 0, acknowledged.stderr);
    assert.match(acknowledged.stdout, /^Acknowledged head seq 2 /);
    const verified = cli(copy, ['evidence', 'verify'], key);
    assert.equal(verified.status, 0, verified.stdout);
    assert.match(verified.stdout, /head signature valid/);
    await withDb(copy, async (db) => {
      const rows = await db.kysely.selectFrom('evidence_acknowledgements').selectAll().execute();
      assert.equal(rows.length, 1);
      assert.equal(rows[0]?.reason, 'restored');
      assert.equal(JSON.parse(rows[0]?.report ?? '{}').reason, 'head_unsigned');
    });
  });

  it('a bad OPENVAT_EVIDENCE_KEY is refused at start', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    for (const bad of ['not a key', rsa]) {
      const result = cli(url, ['evidence', 'verify'], { OPENVAT_EVIDENCE_KEY: bad });
      assert.equal(result.status, 2);
      assert.match(result.stderr, /OPENVAT_EVIDENCE_KEY/);
    }
  });
});

describe('commands that read the database refuse a path that does not exist', () => {
  it('evidence verify, export-head and keys list fail without creating a database', () => {
    const dir = mkdtempSync(join(tmpdir(), 'openvat-missing-'));
    try {
      const path = join(dir, 'nowhere', 'openvat.sqlite');
      for (const args of [
        ['evidence', 'verify'],
        ['evidence', 'export-head'],
        ['keys', 'list'],
        ['keys', 'create', '--plan', 'free'],
      ]) {
        const result = cli(`sqlite:${path}`, args, { OPENVAT_EVIDENCE_KEY: PRIVATE_PEM });
        assert.notEqual(result.status, 0, `${args.join(' ')} succeeded`);
        assert.doesNotMatch(result.stdout, /OK|chain intact/);
        assert.match(result.stderr, /no database at/);
        assert.equal(existsSync(path), false, `${args.join(' ')} created the database`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
