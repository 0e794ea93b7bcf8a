import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ConfirmationsTable } from '../../src/db/schema.js';
import { createManualClock } from '../../src/lib/clock.js';
import { createIdGenerator } from '../../src/lib/ids.js';
import { GENESIS_HASH, hashRecord } from '../../src/modules/confirmations/chain.js';
import { createConfirmationsRepository } from '../../src/modules/confirmations/repository.js';
import {
  type ConfirmationsService,
  type ConfirmOutcome,
  createConfirmationsService,
} from '../../src/modules/confirmations/service.js';
import { createTestModeEvatrClient } from '../../src/modules/confirmations/test-evatr.js';
import type { ApiKeyPrincipal } from '../../src/modules/keys/service.js';
import type { EvatrClient } from '../../src/registries/evatr.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

const principal: ApiKeyPrincipal = {
  id: '0190b2a4-0000-7000-8000-00000000000a',
  accountId: '0190b2a4-0000-7000-8000-0000000000aa',
  plan: 'business',
  mode: 'live',
  defaultRequesterVat: 'DE136695976',
};

const body = { vat_number: 'ATU12345678', company: { name: 'Beispiel GmbH', town: 'Wien' } };

for (const target of await databaseTargets()) {
  describe(`confirmation evidence on ${target.name}`, { skip: target.skip }, () => {
    let db: TestDb;
    let service: ConfirmationsService;
    const clock = createManualClock('2026-11-22T10:00:00.000Z');
    const ids = createIdGenerator();
    let upstreamCalls = 0;
    /** Resolves the upstream call of the next request when called (to hold a request in flight). */
    let gate: Promise<void> | null = null;

    before(async () => {
      db = await target.open();
      const fake = createTestModeEvatrClient({ clock });
      const counting: EvatrClient = {
        async confirm(request) {
          upstreamCalls++;
          if (gate) await gate;
          return fake.confirm(request);
        },
      };
      service = createConfirmationsService({
        repository: createConfirmationsRepository(db.kysely),
        clock,
        ids,
        upstream: { live: counting, test: fake },
        limiter: { take: () => ({ allowed: true }) },
        inFlightTimeoutMs: 60_000,
      });
    });
    after(() => db.dispose());

    /** Runs one confirmation to the end the way the route does (writes in one transaction). */
    async function confirmAndStore(
      idempotencyKey?: string,
      requestBody: unknown = body,
    ): Promise<ConfirmOutcome> {
      const requestId = ids.uuid();
      const outcome = await service.confirm({
        principal,
        body: requestBody as typeof body,
        requestId,
        idempotencyKey,
      });
      if (outcome.kind === 'confirmed') {
        const responseBody = JSON.stringify({
          data: outcome.data,
          meta: { request_id: requestId, ...outcome.meta },
        });
        await db.kysely.transaction().execute((trx) => outcome.store(trx, responseBody));
      }
      return outcome;
    }

    async function rows(): Promise<ConfirmationsTable[]> {
      return db.kysely.selectFrom('confirmations').selectAll().orderBy('seq').execute();
    }

    it('verifies an empty chain', async () => {
      assert.deepEqual(await service.verifyChain(), {
        ok: true,
        count: 0,
        headSeq: 0,
        headHash: GENESIS_HASH,
        signed: false,
        exportedSeq: null,
      });
    });

    it('appends concurrently without gaps or forks: seq 1…n, each linked to the one before', async () => {
      const outcomes = await Promise.all(Array.from({ length: 12 }, () => confirmAndStore()));
      assert.ok(outcomes.every((o) => o.kind === 'confirmed'));
      const stored = await rows();
      assert.deepEqual(
        stored.map((r) => Number(r.seq)),
        Array.from({ length: 12 }, (_, i) => i + 1),
      );
      let prev = GENESIS_HASH;
      for (const row of stored) {
        assert.equal(row.prev_hash, prev);
        assert.equal(row.hash, hashRecord(row));
        prev = row.hash;
      }
      const report = await service.verifyChain(5);
      assert.deepEqual(report, {
        ok: true,
        count: 12,
        headSeq: 12,
        headHash: prev,
        signed: false,
        exportedSeq: null,
      });
      const first = stored[0]!;
      assert.equal(first.retain_until, '2036-11-22T10:00:00.000Z');
      assert.equal(first.account_id, principal.accountId);
      assert.equal(first.key_id, principal.id);
      assert.equal(first.upstream_http_status, 200);
      assert.match(first.upstream_request, /"angefragteUstid":"ATU12345678"/);
      assert.match(first.upstream_response, /"status":"evatr-0000"/);
      assert.deepEqual(JSON.parse(first.api_request), body);
    });

    it('reports an edited row by its seq, and OK again once restored', async () => {
      const original = (await rows())[2]!;
      await db.kysely
        .updateTable('confirmations')
        .set({ vat_number: 'ATU99999999' })
        .where('seq', '=', 3)
        .execute();
      const report = await service.verifyChain();
      assert.equal(report.ok, false);
      assert.equal(!report.ok && report.seq, 3);
      assert.equal(!report.ok && report.reason, 'hash_mismatch');
      await db.kysely
        .updateTable('confirmations')
        .set({ vat_number: original.vat_number })
        .where('seq', '=', 3)
        .execute();
      assert.equal((await service.verifyChain()).ok, true);
    });

    it('reports an edited row whose hash was recomputed at the next link', async () => {
      const original = (await rows())[3]!;
      const forged = { ...original, response: original.response.replace('"valid":true', '"valid":false') };
      await db.kysely
        .updateTable('confirmations')
        .set({ response: forged.response, hash: hashRecord(forged) })
        .where('seq', '=', 4)
        .execute();
      const report = await service.verifyChain();
      assert.equal(!report.ok && report.seq, 5);
      assert.equal(!report.ok && report.reason, 'prev_hash_mismatch');
      await db.kysely
        .updateTable('confirmations')
        .set({ response: original.response, hash: original.hash })
        .where('seq', '=', 4)
        .execute();
      assert.equal((await service.verifyChain()).ok, true);
    });

    it('reports a deleted row as the missing seq', async () => {
      const deleted = (await rows())[6]!;
      await db.kysely.deleteFrom('confirmations').where('seq', '=', 7).execute();
      const report = await service.verifyChain();
      assert.equal(!report.ok && report.seq, 7);
      assert.equal(!report.ok && report.reason, 'missing');
      await db.kysely.insertInto('confirmations').values(deleted).execute();
      assert.equal((await service.verifyChain()).ok, true);
    });

    it('reports rows deleted from the end of the chain', async () => {
      const last = (await rows()).at(-1)!;
      await db.kysely.deleteFrom('confirmations').where('seq', '=', last.seq).execute();
      const report = await service.verifyChain();
      assert.equal(!report.ok && report.seq, Number(last.seq));
      assert.equal(!report.ok && report.reason, 'missing_tail');
      await db.kysely.insertInto('confirmations').values(last).execute();
      assert.equal((await service.verifyChain()).ok, true);
    });

    describe('idempotency', () => {
      it('two simultaneous requests with one key: one confirmed, one 409; one upstream call; then a replay', async () => {
        const key = '0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4b01';
        let open!: () => void;
        gate = new Promise((resolve) => {
          open = resolve;
        });
        const calls = upstreamCalls;
        const first = confirmAndStore(key);
        // The second request arrives while the first one waits for the authority.
        while (upstreamCalls === calls) await new Promise((resolve) => setImmediate(resolve));
        const second = await confirmAndStore(key);
        gate = null;
        open();
        const done = await first;
        assert.equal(done.kind, 'confirmed');
        assert.equal(second.kind, 'refused');
        assert.equal(second.kind === 'refused' && second.reason, 'idempotency_in_flight');
        assert.equal(upstreamCalls, calls + 1);

        const replay = await confirmAndStore(key);
        assert.equal(replay.kind, 'replay');
        const stored = await db.kysely
          .selectFrom('confirmations')
          .select('response')
          .where('id', '=', done.kind === 'confirmed' ? done.data.confirmation_id : '')
          .executeTakeFirstOrThrow();
        assert.equal(replay.kind === 'replay' && replay.body, stored.response);
        assert.equal(upstreamCalls, calls + 1);

        const conflict = await confirmAndStore(key, { ...body, vat_number: 'ATU88881111' });
        assert.equal(conflict.kind === 'refused' && conflict.reason, 'idempotency_key_reused');
      });

      it('takes over an in-flight key abandoned longer than the timeout', async () => {
        const key = '0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4b02';
        const first = await service.confirm({ principal, body, requestId: ids.uuid(), idempotencyKey: key });
        assert.equal(first.kind, 'confirmed'); // never stored: the process "crashed" here
        const blocked = await confirmAndStore(key);
        assert.equal(blocked.kind === 'refused' && blocked.reason, 'idempotency_in_flight');
        clock.advance(61_000);
        const taken = await confirmAndStore(key);
        assert.equal(taken.kind, 'confirmed');
        // The crashed request can no longer complete the key it lost.
        await assert.rejects(
          db.kysely
            .transaction()
            .execute((trx) => (first.kind === 'confirmed' ? first.store(trx, '{}') : Promise.resolve())),
          /taken over/,
        );
        assert.equal((await service.verifyChain()).ok, true, 'the rolled-back append left no trace');
      });

      it('forgets a key after 24 hours', async () => {
        const key = '0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4b03';
        const first = await confirmAndStore(key);
        assert.equal(first.kind, 'confirmed');
        clock.advance(24 * 3_600_000 + 1);
        const again = await confirmAndStore(key, { ...body, vat_number: 'ATU88882222' });
        assert.equal(again.kind, 'confirmed');
        const row = () =>
          db.kysely
            .selectFrom('confirmation_idempotency')
            .selectAll()
            .where('idempotency_key', '=', key)
            .executeTakeFirst();
        assert.ok((await service.purgeExpiredIdempotencyKeys()) >= 1, 'the older keys are purged');
        assert.equal((await row())?.state, 'completed', 'the reused key is fresh again and kept');
        clock.advance(24 * 3_600_000 + 1);
        assert.equal(await service.purgeExpiredIdempotencyKeys(), 1);
        assert.equal(await row(), undefined);
        assert.equal((await service.verifyChain()).ok, true, 'purging keys never touches confirmations');
      });
    });
  });
}
