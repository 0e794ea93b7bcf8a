import assert from 'node:assert/strict';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import {
  createHeadSigner,
  parseEvidenceKey,
  verifyHeadSignature,
} from '../../src/modules/confirmations/anchor.js';
import { hashRecord } from '../../src/modules/confirmations/chain.js';
import { createConfirmationsRepository } from '../../src/modules/confirmations/repository.js';
import { acknowledgeHead } from '../../src/modules/confirmations/verify.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const PRIVATE_PEM = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
const METRICS_TOKEN = 'metrics-token-for-the-evidence-guard';

interface Instance {
  t: TestApp;
  key: TestKey;
  lines: Array<Record<string, unknown>>;
}

for (const target of await databaseTargets()) {
  describe(`the server never signs a chain head it has not verified (${target.name})`, {
    skip: target.skip,
  }, () => {
    let db: TestDb;
    const instances: Instance[] = [];
    let counter = 0;

    before(async () => {
      db = await target.open();
    });
    after(async () => {
      for (const instance of instances) await instance.t.close();
      await db?.dispose();
    });

    /** One more server instance on the same database (a restart, or a second instance). */
    async function instance(): Promise<Instance> {
      const lines: Array<Record<string, unknown>> = [];
      const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
      const t = await buildTestApp(
        {
          OPENVAT_EVIDENCE_KEY: PRIVATE_PEM,
          OPENVAT_METRICS_TOKEN: METRICS_TOKEN,
          OPENVAT_STATUS_POLL_MS: '0',
          OPENVAT_CONFIRM_BURST: '1000',
          LOG_LEVEL: 'info',
        },
        { db, log },
      );
      const key = await t.key('business', 'test', { defaultRequesterVat: 'DE136695976' });
      const created = { t, key, lines };
      instances.push(created);
      return created;
    }

    function confirm(i: Instance) {
      counter++;
      return i.t.app.inject({
        method: 'POST',
        url: '/v1/confirm',
        headers: i.key.headers,
        payload: { vat_number: 'ATU12345678', company: { name: `Firma ${counter}`, town: 'Wien' } },
      });
    }

    async function head() {
      const row = await db.kysely.selectFrom('confirmation_chain_head').selectAll().executeTakeFirstOrThrow();
      return { seq: Number(row.seq), hash: row.hash, signature: row.signature };
    }

    async function rows(): Promise<number> {
      const row = await db.kysely
        .selectFrom('confirmations')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    }

    /** Edits link `seq`, re-hashes it and every later link, moves the head's hash along; the signature stays. */
    async function rewriteFrom(seq: number) {
      const chain = await db.kysely
        .selectFrom('confirmations')
        .selectAll()
        .where('seq', '>=', seq)
        .orderBy('seq')
        .execute();
      const previous = await db.kysely
        .selectFrom('confirmations')
        .select('hash')
        .where('seq', '=', seq - 1)
        .executeTakeFirst();
      let prev = previous?.hash ?? '0'.repeat(64);
      for (const row of chain) {
        const edited = {
          ...row,
          prev_hash: prev,
          requester_vat_number: Number(row.seq) === seq ? 'DE999999999' : row.requester_vat_number,
        };
        const hash = hashRecord(edited);
        await db.kysely
          .updateTable('confirmations')
          .set({ ...edited, hash })
          .where('id', '=', row.id)
          .execute();
        prev = hash;
      }
      await db.kysely
        .updateTable('confirmation_chain_head')
        .set({ hash: prev })
        .where('id', '=', 1)
        .execute();
    }

    /** Deletes the links after `seq` and moves the head back to it, without a signature. */
    async function cutTailTo(seq: number) {
      const kept = await db.kysely
        .selectFrom('confirmations')
        .select('hash')
        .where('seq', '=', seq)
        .executeTakeFirstOrThrow();
      await db.kysely.deleteFrom('confirmations').where('seq', '>', seq).execute();
      await db.kysely
        .updateTable('confirmation_chain_head')
        .set({ seq, hash: kept.hash, signature: null })
        .where('id', '=', 1)
        .execute();
    }

    async function ready(i: Instance) {
      const res = await i.t.app.inject({ method: 'GET', url: '/ready' });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { evidence?: string; warnings?: string[] };
    }

    async function stoppedMetric(i: Instance): Promise<number> {
      const res = await i.t.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      assert.equal(res.statusCode, 200);
      const line = res.body.split('\n').find((l) => l.startsWith('openvat_evidence_confirmations_stopped '));
      assert.ok(line, 'the metric is exposed');
      return Number(line.split(' ')[1]);
    }

    /** What every stopped instance must show: the error, nothing signed or appended, /ready, the metric, the log. */
    async function assertStopped(i: Instance, reason: string) {
      const before = await head();
      const count = await rows();
      const res = await confirm(i);
      assert.equal(res.statusCode, 503, res.body);
      const body = res.json() as { error: { code: string; message: string; details: { reason: string } } };
      assert.equal(body.error.code, 'evidence_unverified');
      assert.equal(body.error.details.reason, reason);
      assert.match(body.error.message, /openvat evidence acknowledge/);
      assert.deepEqual(await head(), before, 'the head was neither extended nor signed');
      assert.equal(await rows(), count, 'nothing was appended');
      const state = await ready(i);
      assert.equal(state.evidence, 'unverified');
      assert.ok(state.warnings?.some((w) => /confirmations are stopped/.test(w)));
      assert.equal(await stoppedMetric(i), 1);
      assert.ok(
        i.lines.some((l) => l.level === 50 && /confirmations are stopped/.test(String(l.msg))),
        'an error in the log',
      );
    }

    async function acknowledge(reason: string) {
      const current = await head();
      const result = await acknowledgeHead(
        createConfirmationsRepository(db.kysely),
        createHeadSigner(parseEvidenceKey(PRIVATE_PEM)),
        // Made by the operator after the instances started (only such an acknowledgement resumes them).
        { id: randomUUID(), seq: current.seq, hash: current.hash, reason, now: new Date(Date.now() + 1_000) },
      );
      assert.equal(result.ok, true);
    }

    async function assertServing(i: Instance) {
      const res = await confirm(i);
      assert.equal(res.statusCode, 200, res.body);
      const now = await head();
      assert.ok(now.signature && verifyHeadSignature(publicKey, now.seq, now.hash, now.signature));
      assert.equal((await ready(i)).evidence, 'ok');
      assert.equal(await stoppedMetric(i), 0);
    }

    it('a link rewritten and re-hashed under the old signature is never extended by a confirmation', async () => {
      const a = await instance();
      for (let n = 0; n < 3; n++) assert.equal((await confirm(a)).statusCode, 200);
      assert.equal((await ready(a)).evidence, 'ok');
      assert.equal(await stoppedMetric(a), 0);

      await rewriteFrom(2);
      await assertStopped(a, 'head_signature_invalid');

      // A restarted instance does not sign it at start either.
      const restarted = await instance();
      const before = await head();
      restarted.t.container.start();
      for (let n = 0; n < 200 && (await ready(restarted)).evidence !== 'unverified'; n++) await sleep(10);
      assert.ok(!restarted.lines.some((l) => l.msg === 'evidence chain head'), 'no head logged as signed');
      assert.deepEqual(await head(), before);
      await assertStopped(restarted, 'head_signature_invalid');
      // Nor the daily run.
      const daily = await restarted.t.container.confirmations.exportHead();
      assert.equal(daily?.ok, false);
      assert.deepEqual(await head(), before);

      await acknowledge('the edit of seq 2 was reviewed and is accepted');
      await assertServing(a);
      await assertServing(restarted);
    });

    it('a tail cut back with the signature removed is never extended, at start or by a confirmation', async () => {
      const a = instances[0] as Instance;
      for (let n = 0; n < 3; n++) assert.equal((await confirm(a)).statusCode, 200);
      const top = (await head()).seq;
      await cutTailTo(top - 2);
      // The instance that wrote the tail knows it was cut.
      await assertStopped(a, 'rolled_back');

      // A restarted instance cannot tell, but does not sign a head without a signature.
      const restarted = await instance();
      restarted.t.container.start();
      for (let n = 0; n < 200 && (await ready(restarted)).evidence !== 'unverified'; n++) await sleep(10);
      assert.equal((await head()).signature, null, 'the start-up did not sign the head');
      const daily = await restarted.t.container.confirmations.exportHead();
      assert.equal(daily?.ok, false);
      assert.equal((await head()).signature, null, 'the daily run did not sign the head');
      await assertStopped(restarted, 'head_unsigned');

      await acknowledge('the tail was cut by a restore from backup; accepted');
      await assertServing(restarted);
      await assertServing(a);
      const daily2 = await restarted.t.container.confirmations.exportHead();
      assert.equal(daily2?.ok, true);
    });

    it('instances extend each other’s links after verifying them, and catch a rewrite of the other’s links', async () => {
      const [a, b] = instances as [Instance, Instance, ...Instance[]];
      for (let n = 0; n < 3; n++) {
        assert.equal((await confirm(a)).statusCode, 200);
        assert.equal((await confirm(b)).statusCode, 200);
      }
      assert.equal((await confirm(b)).statusCode, 200);
      assert.equal((await confirm(b)).statusCode, 200);
      const report = await a.t.container.confirmations.verifyChain(500, { publicKey });
      assert.equal(report.ok, true, JSON.stringify(report));
      // B's last link is rewritten; A never verified it.
      await rewriteFrom((await head()).seq);
      await assertStopped(a, 'head_signature_invalid');
    });
  });
}
