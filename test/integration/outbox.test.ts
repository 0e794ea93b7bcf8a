import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RegistryAnswersTable } from '../../src/db/schema.js';
import { createManualClock } from '../../src/lib/clock.js';
import { createIdGenerator } from '../../src/lib/ids.js';
import { createAuditsRepository } from '../../src/modules/audits/repository.js';
import { createAuditsService } from '../../src/modules/audits/service.js';
import { createEventsRepository } from '../../src/modules/events/repository.js';
import { createEventsService, type StoredEvent } from '../../src/modules/events/service.js';
import { createKeysRepository } from '../../src/modules/keys/repository.js';
import { type ApiKeyPrincipal, createKeysService } from '../../src/modules/keys/service.js';
import { createOutbox, type Entry } from '../../src/modules/outbox/service.js';
import { createRegistryAnswersRepository } from '../../src/modules/validation/repository.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

for (const target of await databaseTargets()) {
  describe(`the outbox on ${target.name}`, { skip: target.skip }, () => {
    let db: TestDb;
    let principal: ApiKeyPrincipal;
    const clock = createManualClock('2026-11-23T10:00:00Z');
    const ids = createIdGenerator();
    /** What the outbox told after commit, with the number of groups committed when it told it. */
    let told: Array<{ what: 'remember' | 'notify'; commits: number; detail: string }>;
    let commits: number[];
    let enqueued: StoredEvent[];

    before(async () => {
      db = await target.open();
      const keys = createKeysService({
        db: db.kysely,
        repository: createKeysRepository(db.kysely),
        clock,
        ids,
      });
      const created = await keys.createKey({ plan: 'business', mode: 'live' });
      const found = await keys.authenticate(created.key);
      assert.ok(found.kind === 'ok', 'the key is accepted');
      principal = found.principal;
    });
    after(() => db.dispose());

    /** Whether each group's audit records were written inside a transaction. */
    let auditsInTransaction: boolean[];

    function outbox() {
      told = [];
      commits = [];
      enqueued = [];
      auditsInTransaction = [];
      const answers = createRegistryAnswersRepository(db.kysely);
      const audits = createAuditsService({ repository: createAuditsRepository(db.kysely), clock });
      return createOutbox({
        db: db.kysely,
        answers: {
          storeMany: (rows, trx) => answers.upsertMany(rows, trx),
          remember: (rows) =>
            told.push({
              what: 'remember',
              commits: commits.length,
              detail: rows.map((r) => r.vat_number).join(),
            }),
        },
        audits: {
          recordMany: (records, trx) => {
            auditsInTransaction.push(trx.isTransaction);
            return audits.recordMany(records, trx);
          },
        },
        events: createEventsService({ repository: createEventsRepository(db.kysely), clock, ids }),
        deliveries: {
          // One delivery per event (a fake endpoint), so that `notify` is due.
          enqueueMany: async (events) => {
            enqueued.push(...events);
            return events.length;
          },
          enqueueBroadcasts: async (events) => events.length,
          notify: () => told.push({ what: 'notify', commits: commits.length, detail: '' }),
        },
        onCommit: (units) => commits.push(units),
      });
    }

    const answer = (vat: string): RegistryAnswersTable => ({
      vat_number: vat,
      source: 'vies',
      valid: 1,
      name: 'ACME',
      address: null,
      checked_at: '2026-11-23T10:00:00.000Z',
    });

    function entry(requestId: string, vat: string, extra: Partial<Entry> = {}): Entry {
      return {
        answers: [answer(vat)],
        audit: {
          principal,
          requestId,
          endpoint: 'validate',
          responseJson: `{"data":{"vat_number":"${vat}"},"meta":{"request_id":"${requestId}"}}`,
          requestBody: { vat_number: vat },
          latencyMs: 3,
          statusCode: 200,
          valid: true,
        },
        events: [
          {
            accountId: principal.accountId,
            keyId: principal.id,
            type: 'validation.completed',
            payload: `{"request_id":"${requestId}"}`,
          },
        ],
        ...extra,
      };
    }

    const stored = async (requestId: string, vat: string) => ({
      audit: await db.kysely
        .selectFrom('audits')
        .selectAll()
        .where('request_id', '=', requestId)
        .executeTakeFirst(),
      answer: await db.kysely
        .selectFrom('registry_answers')
        .selectAll()
        .where('vat_number', '=', vat)
        .executeTakeFirst(),
      events: await db.kysely
        .selectFrom('events')
        .select('payload')
        .where('payload', '=', `{"request_id":"${requestId}"}`)
        .execute(),
    });

    it('writes the answer, the audit record and the event together, and tells memory and workers after the commit', async () => {
      const box = outbox();
      assert.equal(await box.record(entry('req-1', 'DE100000001')), true);
      const rows = await stored('req-1', 'DE100000001');
      assert.equal(
        rows.audit?.response,
        '{"data":{"vat_number":"DE100000001"},"meta":{"request_id":"req-1"}}',
      );
      assert.equal(rows.audit?.status_code, 200);
      assert.equal(rows.answer?.name, 'ACME');
      assert.equal(rows.events.length, 1);
      assert.equal(enqueued.length, 1, 'the event got its deliveries');
      assert.deepEqual(told, [
        { what: 'remember', commits: 1, detail: 'DE100000001' },
        { what: 'notify', commits: 1, detail: '' },
      ]);
    });

    it('an entry that fails in a group writes nothing and tells nothing; the others of its group writes nothing and tells nothing, the others are kept', async () => {
      const box = outbox();
      const results = await Promise.allSettled([
        box.record(entry('req-2', 'DE100000002')),
        // Its audit record's request id is already taken (the first test's): its transaction fails.
        box.record(
          entry('req-1', 'DE100000003', {
            own: async (trx) => {
              await trx
                .insertInto('accounts')
                .values({ id: 'own-row', name: null, created_at: '2026-11-23T10:00:00.000Z' })
                .execute();
              return undefined;
            },
          }),
        ),
        box.record(entry('req-4', 'DE100000004')),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      const failed = await stored('req-1', 'DE100000003');
      assert.equal(failed.answer, undefined, 'no answer of the failed entry');
      assert.equal(failed.events.length, 1, 'no event of the failed entry (only the first test has one)');
      const own = await db.kysely.selectFrom('accounts').select('id').where('id', '=', 'own-row').execute();
      assert.equal(own.length, 0, 'its own rows were rolled back too');
      assert.ok((await stored('req-2', 'DE100000002')).audit);
      assert.ok((await stored('req-4', 'DE100000004')).audit);
      const remembered = told.filter((t) => t.what === 'remember').map((t) => t.detail);
      assert.deepEqual(
        remembered.sort(),
        ['DE100000002', 'DE100000004'],
        'only committed answers reach memory',
      );
      assert.ok(
        told.every((t) => t.commits >= 1),
        'nothing is told before a commit',
      );
    });

    it('a group of audit records alone is one statement without a transaction; a failing record fails alone', async () => {
      const box = outbox();
      const auditOnly = (requestId: string): Entry => {
        const { audit } = entry(requestId, 'DE100000009');
        return { audit } as Entry;
      };
      const results = await Promise.allSettled([
        box.record(auditOnly('req-a1')),
        box.record(auditOnly('req-1')), // taken by the first test: the group's insert fails
        box.record(auditOnly('req-a3')),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.ok((await stored('req-a1', 'DE100000009')).audit);
      assert.ok((await stored('req-a3', 'DE100000009')).audit);
      const original = await stored('req-1', 'DE100000001');
      assert.equal(
        original.audit?.response,
        '{"data":{"vat_number":"DE100000001"},"meta":{"request_id":"req-1"}}',
      );
      assert.ok(auditsInTransaction.length >= 1 && auditsInTransaction.every((t) => !t));

      // With an event (or an answer, or own rows) the group is one transaction again.
      auditsInTransaction = [];
      assert.equal(await box.record(entry('req-a4', 'DE100000010')), true);
      assert.deepEqual(auditsInTransaction, [true]);
    });

    it('own writes that decline record nothing at all', async () => {
      const box = outbox();
      assert.equal(await box.record(entry('req-5', 'DE100000005', { own: async () => false })), false);
      const rows = await stored('req-5', 'DE100000005');
      assert.equal(rows.audit, undefined);
      assert.equal(rows.answer, undefined);
      assert.equal(rows.events.length, 0);
      assert.deepEqual(told, []);
    });

    it('own writes may add the facts they learn inside the transaction', async () => {
      const box = outbox();
      const { audit, events } = entry('req-6', 'DE100000006');
      assert.equal(
        await box.record({
          own: async (trx) => {
            const key = await trx
              .selectFrom('api_keys')
              .select('id')
              .where('id', '=', principal.id)
              .executeTakeFirst();
            return key ? { ...(audit ? { audit } : {}), ...(events ? { events } : {}) } : false;
          },
        }),
        true,
      );
      const rows = await stored('req-6', 'DE100000006');
      assert.ok(rows.audit);
      assert.equal(rows.events.length, 1);
      assert.equal(rows.answer, undefined, 'no answer was given');
    });

    it('answers of one number in one group keep the newest, and never replace a newer stored one', async () => {
      const box = outbox();
      const at = (iso: string, name: string) => ({ ...answer('DE300000001'), checked_at: iso, name });
      await Promise.all([
        box.record({ answers: [at('2026-11-23T10:00:02.000Z', 'newest')] }),
        box.record({ answers: [at('2026-11-23T10:00:01.000Z', 'older')] }),
      ]);
      assert.deepEqual(commits, [2], 'both in one group');
      const read = () =>
        db.kysely
          .selectFrom('registry_answers')
          .select(['name', 'checked_at'])
          .where('vat_number', '=', 'DE300000001')
          .executeTakeFirst();
      assert.deepEqual(await read(), { name: 'newest', checked_at: '2026-11-23T10:00:02.000Z' });
      await box.record({ answers: [at('2026-11-23T09:00:00.000Z', 'stale')] });
      assert.equal((await read())?.name, 'newest', 'an older answer does not replace a newer one');
      await box.record({ answers: [at('2026-11-23T11:00:00.000Z', 'fresh')] });
      assert.equal((await read())?.name, 'fresh');
    });

    it('a lane with a delay commits units that arrive within it together', async () => {
      const box = outbox();
      const lane = box.lane({ delayMs: 200, maxUnits: 3 });
      const pending: Array<Promise<boolean>> = [];
      for (let i = 0; i < 5; i++) {
        pending.push(lane.record(entry(`req-lane-${i}`, `DE20000000${i}`)));
        await sleep(2);
      }
      assert.deepEqual(await Promise.all(pending), [true, true, true, true, true]);
      assert.deepEqual(commits, [3, 2], 'five units, at most three per group, in two groups');
    });
  });
}
