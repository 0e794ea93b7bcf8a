import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { parsePublicKey, verifyHeadSignature } from '../../src/modules/confirmations/anchor.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const PRIVATE_PEM = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

for (const target of await databaseTargets()) {
  describe(`signed evidence heads (${target.name})`, { skip: target.skip }, () => {
    let db: TestDb;
    let t: TestApp;
    const lines: Array<Record<string, unknown>> = [];

    before(async () => {
      db = await target.open();
      const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
      t = await buildTestApp(
        { OPENVAT_EVIDENCE_KEY: PRIVATE_PEM, LOG_LEVEL: 'info', OPENVAT_STATUS_POLL_MS: '0' },
        { db, log },
      );
    });
    after(async () => {
      await t?.close();
      await db?.dispose();
    });

    it('every appended head is stored with a valid signature', async () => {
      const key = await t.key('business', 'test', { defaultRequesterVat: 'DE136695976' });
      for (const name of ['A GmbH', 'B GmbH']) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/confirm',
          headers: key.headers,
          payload: { vat_number: 'ATU12345678', company: { name, town: 'Wien' } },
        });
        assert.equal(res.statusCode, 200, res.body);
        const head = await db.kysely
          .selectFrom('confirmation_chain_head')
          .selectAll()
          .executeTakeFirstOrThrow();
        assert.ok(head.signature, 'the head is signed');
        assert.ok(verifyHeadSignature(publicKey, Number(head.seq), head.hash, head.signature as string));
      }
      const report = await t.container.confirmations.verifyChain(500, { publicKey });
      assert.equal(report.ok && report.signed, true);
    });

    it('the signed head is written to the log when the service starts', async () => {
      t.container.start();
      let line: Record<string, unknown> | undefined;
      for (let i = 0; i < 100 && !line; i++) {
        line = lines.find((l) => l.msg === 'evidence chain head');
        if (!line) await sleep(20);
      }
      assert.ok(line, 'an evidence chain head line');
      const head = line.evidence_head as { seq: number; hash: string; signature: string; public_key: string };
      assert.equal(head.seq, 2);
      assert.ok(verifyHeadSignature(parsePublicKey(head.public_key), head.seq, head.hash, head.signature));
    });
  });
}
