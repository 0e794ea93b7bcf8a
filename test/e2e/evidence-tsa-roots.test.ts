import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createDatabase } from '../../src/db/database.js';
import { createManualClock } from '../../src/lib/clock.js';
import { createHeadSigner, headMessage, parseEvidenceKey } from '../../src/modules/confirmations/anchor.js';
import { hashRecord } from '../../src/modules/confirmations/chain.js';
import { pinRoots, startTestTsa, type TestTsa } from '../fakes/tsa.js';
import { buildTestApp } from '../helpers/app.js';
import { databaseTargets } from '../helpers/db.js';
import { assertOneLine, cli } from '../helpers/evidence-cli.js';
import { postgresName } from '../helpers/resources.js';

const { privateKey } = generateKeyPairSync('ed25519');
const PRIVATE_PEM = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

/** The `sh` block of docs/evidence.md that an auditor runs in the exported directory. */
function documentedCommands(): string[] {
  const doc = readFileSync('docs/evidence.md', 'utf8');
  const block = /In that directory, with stock OpenSSL:\n\n```sh\n([\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(block, 'docs/evidence.md shows the OpenSSL commands');
  return block.trim().split('\n');
}

/** Runs the documented commands in `dir`: each `-verify` with its output and exit status. */
function runDocumented(dir: string) {
  return documentedCommands()
    .filter((command) => command.includes('-verify'))
    .map((command) => {
      const run = spawnSync('sh', ['-c', `${command} 2>&1`], { cwd: dir, encoding: 'utf8' });
      return { command, status: run.status, output: run.stdout };
    });
}

/** A fresh database of the target, by URL (a SQLite file, or a PostgreSQL schema of its own). */
async function freshDatabase(name: 'sqlite' | 'postgres', dir: string) {
  if (name === 'sqlite') return { url: `sqlite:${join(dir, 'openvat.sqlite')}`, drop: async () => {} };
  const schema = postgresName('roots');
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = new URL(process.env.TEST_DATABASE_URL as string);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
  };
}

/** What the operator can do with the database and the evidence key: edit link 2, re-hash, re-sign. */
async function rewriteChain(databaseUrl: string): Promise<string> {
  const db = createDatabase(databaseUrl);
  try {
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
      .set({ hash: prev, signature: signer.sign(rows.length + 1, prev) })
      .where('id', '=', 1)
      .execute();
    // The genuine tokens would show the rewrite: they go.
    await db.kysely.deleteFrom('evidence_timestamps').execute();
    return prev;
  } finally {
    await db.close();
  }
}

async function confirmSome(
  env: Record<string, string>,
  count: number,
  clock?: ReturnType<typeof createManualClock>,
) {
  const t = await buildTestApp(
    { OPENVAT_EVIDENCE_KEY: PRIVATE_PEM, OPENVAT_STATUS_POLL_MS: '0', ...env },
    clock ? { clock } : {},
  );
  try {
    const key = await t.key('business', 'test', { defaultRequesterVat: 'DE136695976' });
    for (let i = 0; i < count; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/confirm',
        headers: key.headers,
        payload: { vat_number: 'ATU12345678', company: { name: `Beispiel ${i} GmbH`, town: 'Wien' } },
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    if (env.OPENVAT_TSA_URLS) assert.equal((await t.container.evidenceTimestamps.stamp()).kind, 'stamped');
  } finally {
    await t.close();
  }
}

for (const target of await databaseTargets()) {
  describe(`evidence tokens are trusted only for pinned roots (${target.name})`, {
    skip: target.skip,
  }, () => {
    let dir: string;
    let database: Awaited<ReturnType<typeof freshDatabase>>;
    let genuine: TestTsa;
    /** The operator's own authority: a throwaway CA whose root travels inside its tokens. */
    let homeMade: TestTsa;
    const base = () => ({ DATABASE_URL: database.url, OPENVAT_EVIDENCE_KEY: PRIVATE_PEM });

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'openvat-roots-'));
      database = await freshDatabase(target.name, dir);
      genuine = await startTestTsa('ok');
      homeMade = await startTestTsa('ok');
      await confirmSome({ DATABASE_URL: database.url, ...genuine.env() }, 3);
    });
    after(async () => {
      await genuine?.close();
      await homeMade?.close();
      await database?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('export-token writes the pinned root the token chains to as ca.pem, and the documented OpenSSL steps verify with it', () => {
      const out = join(dir, 'genuine');
      // Several roots pinned: only the one this token chains to is written.
      const exported = cli(['evidence', 'export-token', '--seq', '3', '--out', out], {
        ...base(),
        OPENVAT_TSA_ROOTS: pinRoots([homeMade, genuine], [genuine.pastCaPem]),
      });
      assert.equal(exported.status, 0, exported.stderr);
      assert.equal(readFileSync(join(out, 'ca.pem'), 'utf8'), genuine.caPem);
      assert.match(readFileSync(join(out, 'README.txt'), 'utf8'), /ca\.pem {6}the pinned certificate/);
      for (const run of runDocumented(out)) {
        assert.equal(run.status, 0, `${run.command}: ${run.output}`);
        assert.match(run.output, /Verification: OK/, run.command);
      }
      // The auditor's own copy of the roots does the same.
      const own = join(dir, 'auditor-roots.pem');
      copyFileSync(genuine.caFile, own);
      const verified = cli(['evidence', 'verify', '--tsa-roots', own], base());
      assert.equal(verified.status, 0, verified.stderr + verified.stdout);
      assert.match(verified.stdout, /^OK: 3 confirmations, .*; 1 time-stamp token valid/);
    });

    it('an authority’s own certificate may be what is pinned (as a trusted list gives it): OpenSSL then gets -partial_chain', () => {
      const leaf = join(dir, 'tsa-certificate.pem');
      writeFileSync(leaf, genuine.tsaPem);
      const verified = cli(['evidence', 'verify', '--tsa-roots', leaf], base());
      assert.equal(verified.status, 0, verified.stderr + verified.stdout);
      const out = join(dir, 'leaf');
      const exported = cli(
        ['evidence', 'export-token', '--seq', '3', '--out', out, '--tsa-roots', leaf],
        base(),
      );
      assert.equal(exported.status, 0, exported.stderr);
      assert.equal(readFileSync(join(out, 'ca.pem'), 'utf8'), genuine.tsaPem);
      const printed = exported.stdout.split('\n').filter((line) => line.includes('openssl ts -verify'));
      assert.equal(printed.length, 2);
      for (const command of printed) {
        assert.match(command, /-partial_chain -attime \d+$/);
        const run = spawnSync('sh', ['-c', `${command.trim()} 2>&1`], { cwd: out, encoding: 'utf8' });
        assert.match(run.stdout, /Verification: OK/, command);
      }
      assert.match(
        readFileSync(join(out, 'README.txt'), 'utf8'),
        /-untrusted chain\.pem -partial_chain -attime/,
      );
    });

    it('without roots, verify says the tokens cannot be checked (exit 2), never OK; export-token refuses', () => {
      const text = cli(['evidence', 'verify'], base());
      assert.equal(text.status, 2, text.stderr + text.stdout);
      assert.match(
        text.stdout,
        /^NOT CHECKED: 3 confirmations, chain intact up to seq 3 \(head [0-9a-f]{64}\), but 1 stored time-stamp token cannot be checked: no trusted TSA roots are known: give --tsa-roots FILE or set OPENVAT_TSA_ROOTS\n$/,
      );
      assert.doesNotMatch(text.stdout, /\bOK\b/);
      const json = JSON.parse(cli(['evidence', 'verify', '--json'], base()).stdout);
      assert.equal(json.ok, false);
      assert.equal(json.reason, 'timestamps_unchecked');
      assert.deepEqual(json.timestamps, { count: 1, checked: false });
      const exported = cli(['evidence', 'export-token', '--seq', '3', '--out', join(dir, 'none')], base());
      assertOneLine(exported, /export-token checks the token first, but no trusted TSA roots are known/);
      assert.equal(existsSync(join(dir, 'none')), false);
    });

    it('a chain rewritten, re-hashed, re-signed and re-stamped by a home-made TSA is refused by verify and by the OpenSSL steps', async () => {
      const hash = await rewriteChain(database.url);
      // The operator stamps the rewritten head with an authority of their own, its root pinned by them.
      await confirmSome({ DATABASE_URL: database.url, ...homeMade.env() }, 0);

      for (const [args, env, source] of [
        [[], { OPENVAT_TSA_ROOTS: genuine.caFile }, 'OPENVAT_TSA_ROOTS'],
        [['--tsa-roots', genuine.caFile], {}, '--tsa-roots'],
      ] as const) {
        const result = cli(['evidence', 'verify', ...args], { ...base(), ...env });
        assert.equal(result.status, 1, result.stderr + result.stdout);
        assert.match(
          result.stdout,
          new RegExp(
            `^BROKEN at seq 3: the time-stamp token of head seq 3 \\(\\S+, http://127\\.0\\.0\\.1:\\d+/tsa\\) does not verify: the TSA certificate \\(CN=openvat test tsa\\) does not chain to a root in ${source} .*\\(timestamp_invalid\\)`,
          ),
        );
      }
      const refused = cli(['evidence', 'export-token', '--seq', '3', '--out', join(dir, 'refused')], {
        ...base(),
        OPENVAT_TSA_ROOTS: genuine.caFile,
      });
      assert.equal(refused.status, 1, refused.stdout);
      assert.match(refused.stderr, /does not verify against the stored chain and OPENVAT_TSA_ROOTS/);
      assert.equal(existsSync(join(dir, 'refused')), false);

      // What the operator hands an auditor: exported against their own root, which verifies...
      const forged = join(dir, 'forged');
      const exported = cli(['evidence', 'export-token', '--seq', '3', '--out', forged], {
        ...base(),
        OPENVAT_TSA_ROOTS: homeMade.caFile,
      });
      assert.equal(exported.status, 0, exported.stderr);
      assert.equal(readFileSync(join(forged, 'head.bin'), 'utf8'), headMessage(3, hash).toString('utf8'));
      for (const run of runDocumented(forged)) assert.match(run.output, /Verification: OK/, run.command);
      // ...but not with the authority's root the auditor compares ca.pem with.
      writeFileSync(join(forged, 'ca.pem'), genuine.caPem);
      const runs = runDocumented(forged);
      assert.equal(runs.length, 2);
      for (const run of runs) {
        assert.notEqual(run.status, 0, run.command);
        assert.match(run.output, /Verification: FAILED/, run.command);
      }
    });
  });

  describe(`a token dated before the link it covers is invalid (${target.name})`, {
    skip: target.skip,
  }, () => {
    let dir: string;
    let database: Awaited<ReturnType<typeof freshDatabase>>;
    let tsa: TestTsa;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'openvat-gentime-'));
      database = await freshDatabase(target.name, dir);
      tsa = await startTestTsa('ok');
      // Links stored on 2020-12-01, when the authority's older certificate (valid in 2020) was in use.
      await confirmSome({ DATABASE_URL: database.url }, 1, createManualClock('2020-12-01T10:00:00Z'));
    });
    after(async () => {
      await tsa?.close();
      await database?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    async function storeToken(genTime: string) {
      const db = createDatabase(database.url);
      try {
        const link = await db.kysely
          .selectFrom('confirmations')
          .select('hash')
          .where('seq', '=', 1)
          .executeTakeFirstOrThrow();
        const token = await tsa.pastToken(headMessage(1, link.hash), new Date(genTime));
        await db.kysely.deleteFrom('evidence_timestamps').execute();
        await db.kysely
          .insertInto('evidence_timestamps')
          .values({
            id: '00000000-0000-7000-8000-000000000001',
            head_seq: 1,
            head_hash: link.hash,
            gen_time: new Date(genTime).toISOString(),
            tsa_url: 'https://old-tsa.example/tsr',
            serial: '01',
            token: token.toString('base64'),
            chain: tsa.pastCaPem,
            created_at: new Date(genTime).toISOString(),
          })
          .execute();
      } finally {
        await db.close();
      }
    }

    it('six months before the link was stored: timestamp_invalid; after it: valid', async () => {
      const env = {
        DATABASE_URL: database.url,
        OPENVAT_EVIDENCE_KEY: PRIVATE_PEM,
        OPENVAT_TSA_ROOTS: tsa.pastCaFile,
      };
      await storeToken('2020-06-01T12:00:00Z');
      const early = cli(['evidence', 'verify'], env);
      assert.equal(early.status, 1, early.stderr + early.stdout);
      assert.match(
        early.stdout,
        /^BROKEN at seq 1: the time-stamp token of head seq 1 \(2020-06-01T12:00:00\.000Z, https:\/\/old-tsa\.example\/tsr\) is dated before confirmation seq 1, which it covers, was stored \(2020-12-01T10:00:00\.000Z\).*\(timestamp_invalid\)/,
      );
      await storeToken('2020-12-15T12:00:00Z');
      const later = cli(['evidence', 'verify'], env);
      assert.equal(later.status, 0, later.stderr + later.stdout);
      assert.match(later.stdout, /^OK: 1 confirmation, .*1 time-stamp token valid/);
    });
  });
}
