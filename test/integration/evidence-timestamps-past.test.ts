import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { headMessage } from '../../src/modules/confirmations/anchor.js';
import { createConfirmationsRepository } from '../../src/modules/confirmations/repository.js';
import { createEvidenceTimestampsRepository } from '../../src/modules/evidence-timestamps/repository.js';
import { trustedRoots } from '../../src/modules/evidence-timestamps/trust.js';
import { checkResponse, grantedResponse } from '../../src/modules/evidence-timestamps/tsp.js';
import { verifyTimestamps } from '../../src/modules/evidence-timestamps/verify.js';
import { startTestTsa, type TestTsa } from '../fakes/tsa.js';
import { buildTestApp } from '../helpers/app.js';
import { databaseTargets } from '../helpers/db.js';

const { privateKey } = generateKeyPairSync('ed25519');
const PRIVATE_PEM = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

/** Stored tokens checked as of their own time, against the pinned roots and the link they cover. */
for (const target of await databaseTargets()) {
  describe(`time-stamp tokens of the past (${target.name})`, { skip: target.skip }, () => {
    let tsa: TestTsa;
    before(async () => {
      tsa = await startTestTsa('ok');
    });
    after(async () => {
      await tsa?.close();
    });

    it('checks a token as of its own time: a TSA certificate that expired later does not invalidate it, a time before the link does', async () => {
      // A chain whose first link was stored on 2020-05-01, when the older TSA certificate was valid.
      const past = await target.open();
      const then = await buildTestApp(
        { OPENVAT_EVIDENCE_KEY: PRIVATE_PEM, OPENVAT_STATUS_POLL_MS: '0' },
        { db: past, clock: createManualClock('2020-05-01T10:00:00Z') },
      );
      try {
        const pastKey = await then.key('business', 'test', { defaultRequesterVat: 'DE136695976' });
        const res = await then.app.inject({
          method: 'POST',
          url: '/v1/confirm',
          headers: pastKey.headers,
          payload: { vat_number: 'ATU12345678', company: { name: 'Firma 2020', town: 'Wien' } },
        });
        assert.equal(res.statusCode, 200, res.body);
        const confirmations = createConfirmationsRepository(past.kysely);
        const pastTokens = createEvidenceTimestampsRepository(past.kysely, past.dialect);
        const hash = (await confirmations.hashAt(1)) as string;
        const data = headMessage(1, hash);
        const oldRoot = trustedRoots([tsa.pastCaPem], 'the old roots');
        const row = (token: Buffer, genTime: string, id: string) => ({
          id,
          head_seq: 1,
          head_hash: hash,
          gen_time: genTime,
          tsa_url: 'https://old-tsa.example/tsr',
          serial: '01',
          token: token.toString('base64'),
          // The older root travels with the token, as an authority's chain does.
          chain: tsa.pastCaPem,
          created_at: genTime,
        });
        const verified = async (roots = oldRoot) => {
          const report = await verifyTimestamps(pastTokens, confirmations, 1, roots);
          await past.kysely.deleteFrom('evidence_timestamps').execute();
          return report;
        };
        // Issued in 2020 by a certificate valid through 2020 (expired since): valid.
        const old = await tsa.pastToken(data, new Date('2020-06-01T12:00:00Z'));
        await pastTokens.insert(row(old, '2020-06-01T12:00:00.000Z', '00000000-0000-7000-8000-000000000001'));
        const report = await verified();
        assert.equal(report.ok, true, JSON.stringify(report));
        assert.equal(report.ok && report.count, 1);
        // The same token without its root pinned: the root it carries is not trusted.
        await pastTokens.insert(row(old, '2020-06-01T12:00:00.000Z', '00000000-0000-7000-8000-000000000001'));
        const unpinned = await verified(trustedRoots([tsa.caPem], 'the test roots'));
        assert.equal(!unpinned.ok && unpinned.reason, 'timestamp_invalid');
        assert.match(!unpinned.ok ? unpinned.message : '', /does not chain to a root in the test roots/);
        // Dated after that certificate had expired: refused, naming the seq.
        const late = await tsa.pastToken(data, new Date('2021-06-01T12:00:00Z'));
        await pastTokens.insert(
          row(late, '2021-06-01T12:00:00.000Z', '00000000-0000-7000-8000-000000000002'),
        );
        const refused = await verified();
        assert.equal(refused.ok, false);
        assert.equal(!refused.ok && refused.seq, 1);
        assert.equal(!refused.ok && refused.reason, 'timestamp_invalid');
        assert.match(!refused.ok ? refused.message : '', /not valid at the token's time 2021-06-01/);
        // Dated a month before the link existed (the certificate valid then): refused.
        const early = await tsa.pastToken(data, new Date('2020-04-01T12:00:00Z'));
        await pastTokens.insert(
          row(early, '2020-04-01T12:00:00.000Z', '00000000-0000-7000-8000-000000000003'),
        );
        const before = await verified();
        assert.equal(!before.ok && before.reason, 'timestamp_invalid');
        assert.match(
          !before.ok ? before.message : '',
          /is dated before confirmation seq 1, which it covers, was stored \(2020-05-01T10:00:00\.000Z\)/,
        );
        // Such a token is never taken as a fresh answer, nonce and imprint ours: its time is not now.
        const nonce = Buffer.from('0102030405060708', 'hex');
        const stale = await tsa.pastToken(data, new Date('2020-06-01T12:00:00Z'), nonce);
        const answer = await checkResponse(grantedResponse(stale), {
          data,
          nonce,
          now: new Date(),
          roots: oldRoot,
        });
        assert.equal(answer.ok, false);
        assert.match(!answer.ok ? answer.reason : '', /is not the time of the request/);
      } finally {
        await then.close();
        await past.dispose();
      }
    });
  });
}
