import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { headMessage } from '../../src/modules/confirmations/anchor.js';
import { createConfirmationsRepository } from '../../src/modules/confirmations/repository.js';
import { verifyEvidenceChain } from '../../src/modules/confirmations/verify.js';
import { createHttpTsaClient, type TsaClient } from '../../src/modules/evidence-timestamps/client.js';
import { createEvidenceTimestampsRepository } from '../../src/modules/evidence-timestamps/repository.js';
import { trustedRoots } from '../../src/modules/evidence-timestamps/trust.js';
import {
  checkResponse,
  checkToken,
  imprintOf,
  timeStampRequest,
} from '../../src/modules/evidence-timestamps/tsp.js';
import { verifyTimestamps } from '../../src/modules/evidence-timestamps/verify.js';
import { pinRoots, startTestTsa, type TestTsa, tsaDownUrl } from '../fakes/tsa.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const PRIVATE_PEM = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
const METRICS_TOKEN = 'metrics-token-for-the-evidence-timestamps';

/** Every bad authority a real deployment meets, each to be refused before the good one is asked. */
const BAD_MODES = ['slow', 'http-500', 'rejection', 'other-imprint', 'other-nonce', 'no-eku'] as const;

for (const target of await databaseTargets()) {
  describe(`trusted timestamps of the evidence chain head (${target.name})`, { skip: target.skip }, () => {
    let db: TestDb;
    let good: TestTsa;
    /** Valid tokens, but its root is not pinned: a home-made authority. */
    let homeMade: TestTsa;
    const bad: TestTsa[] = [];
    let down: string;
    let t: TestApp;
    let key: TestKey;
    const lines: Array<Record<string, unknown>> = [];
    const asked: string[] = [];
    let counter = 0;
    const extra: TestApp[] = [];

    before(async () => {
      db = await target.open();
      good = await startTestTsa('ok');
      homeMade = await startTestTsa('ok');
      for (const mode of BAD_MODES) bad.push(await startTestTsa(mode));
      down = await tsaDownUrl();
      const http = createHttpTsaClient();
      // The port, recording the order the authorities are asked in.
      const client: TsaClient = {
        post(url, query, timeoutMs) {
          asked.push(url);
          return http.post(url, query, timeoutMs);
        },
      };
      const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
      t = await buildTestApp(
        {
          OPENVAT_EVIDENCE_KEY: PRIVATE_PEM,
          OPENVAT_METRICS_TOKEN: METRICS_TOKEN,
          OPENVAT_STATUS_POLL_MS: '0',
          OPENVAT_CONFIRM_BURST: '1000',
          OPENVAT_TSA_URLS: [down, ...bad.map((b) => b.url), homeMade.url, good.url].join(','),
          OPENVAT_TSA_ROOTS: pinRoots([good, ...bad]),
          OPENVAT_TSA_TIMEOUT_MS: '1000',
          LOG_LEVEL: 'info',
        },
        { db, log, tsa: client },
      );
      key = await t.key('business', 'test', { defaultRequesterVat: 'DE136695976' });
    });
    after(async () => {
      for (const o of extra) await o.close();
      await t?.close();
      await good?.close();
      await homeMade?.close();
      for (const b of bad) await b.close();
      await db?.dispose();
    });

    async function confirm() {
      counter++;
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/confirm',
        headers: key.headers,
        payload: { vat_number: 'ATU12345678', company: { name: `Firma ${counter}`, town: 'Wien' } },
      });
      assert.equal(res.statusCode, 200, res.body);
    }

    const tokens = () => createEvidenceTimestampsRepository(db.kysely, db.dialect);
    const roots = () => trustedRoots([good.caPem], 'the test roots');

    it('refuses every wrong authority, stores the good one’s token over the signed head', async () => {
      await confirm();
      await confirm();
      const outcome = await t.container.evidenceTimestamps.runIfDue();
      assert.equal(outcome?.kind, 'stamped', JSON.stringify(outcome));
      // Asked in the configured order, each bad one once, the good one last.
      assert.deepEqual(asked, [down, ...bad.map((b) => b.url), homeMade.url, good.url]);
      for (const b of [...bad, homeMade]) assert.equal(b.queries.length, 1, b.mode);
      const refusals = lines.filter(
        (l) => l.msg === 'time-stamping authority refused or failed; the next one is asked',
      );
      const reasons = refusals.map((l) => `${l.tsa_url} ${l.reason}`);
      assert.equal(reasons.length, BAD_MODES.length + 2, reasons.join('\n'));
      assert.match(reasons[0] ?? '', /ECONNREFUSED/);
      assert.match(reasons[1] ?? '', /no answer within 1000 ms/);
      assert.match(reasons[2] ?? '', /HTTP 500/);
      assert.match(reasons[3] ?? '', /status 2 \(rejection\)/);
      assert.match(reasons[4] ?? '', /another imprint/);
      assert.match(reasons[5] ?? '', /another nonce/);
      assert.match(reasons[6] ?? '', /lacks the critical time-stamping extended key usage/);
      // A valid token whose certificate chains only to the root it carries itself is refused.
      assert.match(
        reasons[7] ?? '',
        /^http:\S+ the TSA certificate \(CN=openvat test tsa\) does not chain to a root in OPENVAT_TSA_ROOTS \(\/\S+roots-\d+\.pem\)/,
      );

      const stored = await tokens().ofSeq(2);
      assert.equal(stored.length, 1);
      const row = stored[0];
      assert.ok(row);
      assert.equal(row.tsa_url, good.url);
      assert.match(row.chain, /BEGIN CERTIFICATE[\s\S]+BEGIN CERTIFICATE/);
      // The token covers SHA-256 of the signed head's bytes: headMessage(seq, hash).
      const head = await createConfirmationsRepository(db.kysely).head();
      assert.equal(Number(head?.seq), 2);
      const checked = await checkToken(Buffer.from(row.token, 'base64'), headMessage(2, head?.hash ?? ''), {
        roots: roots(),
      });
      assert.ok(checked.ok, checked.ok ? '' : checked.reason);
      assert.equal(checked.facts.genTime.toISOString(), row.gen_time);
      assert.equal(checked.facts.root, good.caPem);
      // The same token, checked against another authority's root: its own root is no anchor.
      const other = await checkToken(Buffer.from(row.token, 'base64'), headMessage(2, head?.hash ?? ''), {
        roots: trustedRoots([homeMade.caPem], 'the other roots'),
      });
      assert.equal(other.ok, false);
      assert.equal(!other.ok && other.problem, 'untrusted');
      // The chain's nonce was ours: one stored token per asked good query.
      assert.equal(good.queries.length, 1);
    });

    it('asks again only after the interval, and only when the chain has new links', async () => {
      assert.equal(await t.container.evidenceTimestamps.runIfDue(), null);
      const same = await t.container.evidenceTimestamps.stamp();
      assert.deepEqual(same, { kind: 'current', seq: 2 });
      assert.equal(good.queries.length, 1);
      await confirm();
      const next = await t.container.evidenceTimestamps.stamp();
      assert.equal(next.kind, 'stamped');
      assert.equal(next.kind === 'stamped' && Number(next.row.head_seq), 3);
    });

    it('gives the newest token covering a link to other features', async () => {
      const repository = tokens();
      const covering = await repository.newestTokenCovering(1);
      assert.ok(covering);
      assert.equal(covering.head_seq, 3);
      assert.equal(covering.tsa_url, good.url);
      assert.ok(Buffer.isBuffer(covering.token) && covering.token[0] === 0x30);
      assert.equal((await repository.newestTokenCovering(3))?.head_seq, 3);
      assert.equal(await repository.newestTokenCovering(4), null);
    });

    it('shows the newest token’s age and authority on /v1/status and in the metrics', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/v1/status' });
      assert.equal(res.statusCode, 200, res.body);
      const status = res.json().data.evidence_timestamps;
      assert.equal(status.enabled, true);
      assert.equal(status.newest.head_seq, 3);
      assert.equal(status.newest.tsa_url, good.url);
      assert.ok(Number.isInteger(status.newest.age_seconds) && status.newest.age_seconds >= 0);
      assert.equal(status.interval_seconds, 3600);
      const metrics = await t.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      assert.match(
        metrics.body,
        new RegExp(
          `openvat_evidence_timestamp_age_seconds\\{tsa_url="${good.url.replace(/[.]/g, '\\.')}"\\} \\d+`,
        ),
      );
    });

    it('verifies every stored token against the chain, as of its own time', async () => {
      const confirmations = createConfirmationsRepository(db.kysely);
      const chain = await verifyEvidenceChain(confirmations, 500, { publicKey });
      assert.ok(chain.ok);
      const report = await verifyTimestamps(tokens(), confirmations, chain.headSeq, roots());
      assert.equal(report.ok, true, JSON.stringify(report));
      assert.equal(report.ok && report.count, 2);
      // Against roots that are not the authority's, every token is invalid.
      const elsewhere = await verifyTimestamps(
        tokens(),
        confirmations,
        chain.headSeq,
        trustedRoots([homeMade.caPem], 'the other roots'),
      );
      assert.equal(!elsewhere.ok && elsewhere.reason, 'timestamp_invalid');
      assert.match(!elsewhere.ok ? elsewhere.message : '', /does not chain to a root in the other roots/);
    });

    it('fails verification naming the seq of a token moved to another head', async () => {
      const confirmations = createConfirmationsRepository(db.kysely);
      await db.kysely
        .updateTable('evidence_timestamps')
        .set({ head_seq: 1 })
        .where('head_seq', '=', 2)
        .execute();
      try {
        const report = await verifyTimestamps(tokens(), confirmations, 3, roots());
        assert.equal(report.ok, false);
        assert.equal(!report.ok && report.reason, 'timestamp_moved');
        assert.equal(!report.ok && report.seq, 1);
      } finally {
        await db.kysely
          .updateTable('evidence_timestamps')
          .set({ head_seq: 2 })
          .where('head_seq', '=', 1)
          .execute();
      }
    });

    it('stores nothing and records why when every authority fails', async () => {
      const before = await tokens().highestSeq();
      for (const b of bad) b.mode = 'rejection';
      good.mode = 'other-nonce';
      await confirm();
      const outcome = await t.container.evidenceTimestamps.stamp();
      assert.equal(outcome.kind, 'failed');
      assert.equal(outcome.kind === 'failed' && outcome.failures.length, BAD_MODES.length + 3);
      assert.equal(await tokens().highestSeq(), before);
      // The confirmation itself was never held up by the authorities.
      await confirm();
      const status = (await t.app.inject({ method: 'GET', url: '/v1/status' })).json().data
        .evidence_timestamps;
      assert.equal(status.newest.head_seq, before);
    });

    it('one instance at a time asks an authority (the run is leased in the database)', async () => {
      good.mode = 'ok';
      const others = await Promise.all(
        [0, 1].map(() =>
          buildTestApp(
            { OPENVAT_EVIDENCE_KEY: PRIVATE_PEM, OPENVAT_STATUS_POLL_MS: '0', ...good.env() },
            { db },
          ),
        ),
      );
      try {
        await db.kysely
          .updateTable('evidence_timestamp_runs')
          .set({ next_run_at: '2000-01-01T00:00:00.000Z' })
          .execute();
        const queries = good.queries.length;
        const outcomes = await Promise.all(others.map((o) => o.container.evidenceTimestamps.runIfDue()));
        assert.deepEqual(outcomes.map((o) => o?.kind ?? 'not claimed').sort(), ['not claimed', 'stamped']);
        assert.equal(good.queries.length, queries + 1);
        const run = await db.kysely
          .selectFrom('evidence_timestamp_runs')
          .selectAll()
          .executeTakeFirstOrThrow();
        assert.equal(run.locked_until, null);
        assert.equal(run.last_error, null);
        assert.equal(run.last_success_at, run.last_run_at, 'the stamped run is the last success');
        assert.ok(run.next_run_at > new Date().toISOString());
      } finally {
        // Closing an instance closes the database it was given: they are closed with the suite's.
        extra.push(...others);
      }
    });

    it('sends an account in the URL as basic authentication, and never shows or stores it', async () => {
      const withAccount = good.url.replace('http://', 'http://tsa-user:s%40cret@');
      const other = await buildTestApp(
        {
          OPENVAT_EVIDENCE_KEY: PRIVATE_PEM,
          OPENVAT_STATUS_POLL_MS: '0',
          ...good.env(),
          OPENVAT_TSA_URLS: withAccount,
        },
        { db },
      );
      try {
        await confirm();
        const outcome = await other.container.evidenceTimestamps.stamp();
        assert.equal(outcome.kind, 'stamped', JSON.stringify(outcome));
        assert.equal(
          good.authorizations.at(-1),
          `Basic ${Buffer.from('tsa-user:s@cret').toString('base64')}`,
        );
        assert.equal(outcome.kind === 'stamped' && outcome.row.tsa_url, good.url);
        const status = (await other.app.inject({ method: 'GET', url: '/v1/status' })).json().data
          .evidence_timestamps;
        assert.deepEqual(status.tsa_urls, [good.url]);
        assert.doesNotMatch(JSON.stringify(status), /s%40cret|tsa-user/);
      } finally {
        extra.push(other);
      }
    });

    it('encodes any random nonce as DER requires (leading zero bytes, high bit)', async () => {
      const data = Buffer.from('nonce encoding');
      const own = await startTestTsa('ok');
      try {
        for (const hex of ['00000000000000000000000000000001', '0080ff', 'ff00', '00']) {
          const nonce = Buffer.from(hex, 'hex');
          const answer = await createHttpTsaClient().post(
            good.url,
            timeStampRequest(imprintOf(data), nonce),
            5_000,
          );
          assert.ok(answer.ok && answer.status === 200, hex);
          const checked = await checkResponse(answer.body, { data, nonce, now: new Date(), roots: roots() });
          assert.ok(checked.ok, `${hex}: ${checked.ok ? '' : checked.reason}`);
        }
      } finally {
        await own.close();
      }
    });
  });
}
