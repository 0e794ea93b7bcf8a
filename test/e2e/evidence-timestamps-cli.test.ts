import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createHeadSigner, parseEvidenceKey } from '../../src/modules/confirmations/anchor.js';
import { hashRecord } from '../../src/modules/confirmations/chain.js';
import { startTestTsa, type TestTsa } from '../fakes/tsa.js';
import { buildTestApp } from '../helpers/app.js';
import { builtCli } from '../helpers/cli.js';

const { privateKey } = generateKeyPairSync('ed25519');
const PRIVATE_PEM = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

/** The `sh` block of docs/evidence.md that an auditor runs in the exported directory. */
function documentedCommands(): string[] {
  const doc = readFileSync('docs/evidence.md', 'utf8');
  const block = /In that directory, with stock OpenSSL:\n\n```sh\n([\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(block, 'docs/evidence.md shows the OpenSSL commands');
  return block.trim().split('\n');
}

/** Time-stamp tokens as an operator and an auditor use them: the CLI, then OpenSSL alone. */
describe('openvat evidence verify and export-token with trusted timestamps', () => {
  let dir: string;
  let databaseUrl: string;
  let tsa: TestTsa;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-tsa-cli-'));
    databaseUrl = `sqlite:${join(dir, 'openvat.sqlite')}`;
    tsa = await startTestTsa('ok');
    const t = await buildTestApp({
      DATABASE_URL: databaseUrl,
      OPENVAT_EVIDENCE_KEY: PRIVATE_PEM,
      ...tsa.env(),
      OPENVAT_STATUS_POLL_MS: '0',
    });
    try {
      const key = await t.key('business', 'test', { defaultRequesterVat: 'DE136695976' });
      for (const [i, vat] of ['ATU12345678', 'ATU88881111', 'ATU99992001', 'ATU12345678'].entries()) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/confirm',
          headers: key.headers,
          payload: { vat_number: vat, company: { name: 'Beispiel GmbH', town: 'Wien' } },
        });
        assert.equal(res.statusCode, 200, res.body);
        if (i === 2) assert.equal((await t.container.evidenceTimestamps.stamp()).kind, 'stamped');
      }
    } finally {
      await t.close();
    }
  });
  after(async () => {
    await tsa.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function cli(...args: string[]) {
    return spawnSync(process.execPath, [...builtCli, 'evidence', ...args], {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        LOG_LEVEL: 'silent',
        OPENVAT_EVIDENCE_KEY: PRIVATE_PEM,
        OPENVAT_TSA_ROOTS: tsa.caFile,
      },
      encoding: 'utf8',
    });
  }

  it('verify checks the stored token with the chain', () => {
    const result = cli('verify');
    assert.equal(result.status, 0, result.stderr + result.stdout);
    assert.match(
      result.stdout,
      /^OK: 4 confirmations, chain intact up to seq 4 .*head signature valid; 1 time-stamp token valid \(newest over seq 3 at \S+ by http:\/\/127\.0\.0\.1:\d+\/tsa\)/,
    );
    const json = JSON.parse(cli('verify', '--json').stdout);
    assert.equal(json.timestamps.count, 1);
    assert.equal(json.timestamps.newest.head_seq, 3);
  });

  it('export-token writes what stock OpenSSL verifies with the commands the docs show', () => {
    const out = join(dir, 'export');
    const result = cli('export-token', '--seq', '3', '--out', out);
    assert.equal(result.status, 0, result.stderr);
    const head = readFileSync(join(out, 'head.bin'), 'utf8');
    assert.match(head, /^openvat-evidence-head\/1\n3\n[0-9a-f]{64}$/);
    assert.equal(readFileSync(join(out, 'ca.pem'), 'utf8'), tsa.caPem);
    for (const command of documentedCommands()) {
      const output = execFileSync('sh', ['-c', `${command} 2>&1`], { cwd: out, encoding: 'utf8' });
      if (command.includes('-verify')) assert.match(output, /Verification: OK/, command);
      else
        assert.match(
          output,
          /Status: Granted\.[\s\S]*Nonce: 0x[0-9A-F]+[\s\S]*TSA: DirName:\/CN=openvat test tsa/,
          command,
        );
    }
    // The commands it prints (with the token's own time) run as well.
    const printed = result.stdout.split('\n').filter((line) => line.trim().startsWith('openssl ts -verify'));
    assert.equal(printed.length, 2);
    for (const command of printed) {
      assert.match(command, /-attime \d+/);
      const output = execFileSync('sh', ['-c', `${command.trim()} 2>&1`], { cwd: out, encoding: 'utf8' });
      assert.match(output, /Verification: OK/, command);
    }
    // Other bytes than the head's do not verify.
    const other = spawnSync(
      'sh',
      [
        '-c',
        'printf x > other.bin && openssl ts -verify -in token.tsr -data other.bin -CAfile ca.pem -untrusted chain.pem 2>&1',
      ],
      { cwd: out, encoding: 'utf8' },
    );
    assert.notEqual(other.status, 0);
    assert.match(other.stdout, /Verification: FAILED/);
  });

  it('export-token exports the first token covering a link, and refuses a link no token covers', () => {
    const covering = cli('export-token', '--seq', '1', '--out', join(dir, 'first'));
    assert.equal(covering.status, 0, covering.stderr);
    assert.match(
      covering.stdout,
      /No token over head seq 1: exported the first one covering it, over head seq 3/,
    );
    const none = cli('export-token', '--seq', '4', '--out', join(dir, 'none'));
    assert.equal(none.status, 1);
    assert.match(none.stderr, /no time-stamp token covers chain head seq 4 yet/);
  });

  it('a chain rewritten after its token fails verify naming the seq, even re-signed with the key', async () => {
    const { createDatabase } = await import('../../src/db/database.js');
    const db = createDatabase(databaseUrl);
    try {
      // The operator holds the key: edit link 2, re-hash every later link, re-sign the head.
      const rows = await db.kysely
        .selectFrom('confirmations')
        .selectAll()
        .where('seq', '>=', 2)
        .orderBy('seq')
        .execute();
      let prev = (
        await db.kysely
          .selectFrom('confirmations')
          .select('hash')
          .where('seq', '=', 1)
          .executeTakeFirstOrThrow()
      ).hash;
      for (const row of rows) {
        const edited = {
          ...row,
          prev_hash: prev,
          requester_vat_number: Number(row.seq) === 2 ? 'DE999999999' : row.requester_vat_number,
        };
        const hash = hashRecord(edited);
        await db.kysely
          .updateTable('confirmations')
          .set({ ...edited, hash })
          .where('id', '=', row.id)
          .execute();
        prev = hash;
      }
      const signer = createHeadSigner(parseEvidenceKey(PRIVATE_PEM));
      await db.kysely
        .updateTable('confirmation_chain_head')
        .set({ hash: prev, signature: signer.sign(4, prev) })
        .where('id', '=', 1)
        .execute();
    } finally {
      await db.close();
    }
    const result = cli('verify');
    assert.equal(result.status, 1, result.stdout);
    assert.match(
      result.stdout,
      /^BROKEN at seq 3: confirmation seq 3 is not the link time-stamped at \S+: the chain was rewritten up to seq 3 after it was time-stamped \(timestamp_rewritten\)/,
    );
    const exported = cli('export-token', '--seq', '3', '--out', join(dir, 'rewritten'));
    assert.equal(exported.status, 1);
    assert.match(exported.stderr, /does not verify against the stored chain/);
  });
});
