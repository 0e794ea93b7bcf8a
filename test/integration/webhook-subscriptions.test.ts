import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { createIdGenerator } from '../../src/lib/ids.js';
import type { EventType } from '../../src/modules/events/index.js';
import { createEventsRepository } from '../../src/modules/events/repository.js';
import { createEventsService } from '../../src/modules/events/service.js';
import { createKeysRepository } from '../../src/modules/keys/repository.js';
import { type ApiKeyPrincipal, createKeysService } from '../../src/modules/keys/service.js';
import { createWebhooksRepository } from '../../src/modules/webhooks/repository.js';
import { createWebhooksService, type WebhooksService } from '../../src/modules/webhooks/service.js';
import { createHttpTransport } from '../../src/modules/webhooks/transport.js';
import { createFakeDns } from '../fakes/webhook-dns.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

for (const target of await databaseTargets()) {
  describe(`webhook subscriptions on ${target.name}`, { skip: target.skip }, () => {
    let db: TestDb;
    const clock = createManualClock('2026-11-28T10:00:00.000Z');
    const ids = createIdGenerator();
    const transport = createHttpTransport();
    let webhooks: WebhooksService;
    let events: ReturnType<typeof createEventsService>;
    let keys: ReturnType<typeof createKeysService>;

    before(async () => {
      db = await target.open();
      events = createEventsService({ repository: createEventsRepository(db.kysely), clock, ids });
      keys = createKeysService({ db: db.kysely, repository: createKeysRepository(db.kysely), clock, ids });
      webhooks = createWebhooksService({
        db: db.kysely,
        repository: createWebhooksRepository(db.kysely, db.dialect),
        clock,
        ids,
        dns: createFakeDns({}),
        transport,
        allowPrivate: true,
        backoffMs: 1_000,
        workerId: 'worker-a',
      });
    });
    after(async () => {
      transport.close();
      await db.dispose();
    });

    async function newKey(): Promise<ApiKeyPrincipal> {
      const created = await keys.createKey({ plan: 'pro', mode: 'live' });
      const found = await keys.authenticate(created.key);
      assert.ok(found.kind === 'ok', 'the key is accepted');
      return found.principal;
    }

    async function register(owner: ApiKeyPrincipal, path: string, list?: string[]) {
      const result = await webhooks.register(owner, `http://127.0.0.1:9/${path}`, list);
      assert.ok(result.kind === 'ok', JSON.stringify(result));
      return result.endpoint.id;
    }

    function emit(owner: ApiKeyPrincipal, type: EventType) {
      return db.kysely.transaction().execute(async (trx) => {
        const event = await events.record(
          { accountId: owner.accountId, keyId: owner.id, type, payload: '{"data":{}}' },
          trx,
        );
        return webhooks.enqueue(event, trx);
      });
    }

    it("an endpoint that lists its events receives only those; one without receives its key's four, never rates.changed", async () => {
      const owner = await newKey();
      const plain = await register(owner, 'plain');
      const listed = await register(owner, 'listed', ['validation.completed']);
      const rates = await register(owner, 'rates', ['rates.changed']);
      const other = await newKey();
      const elsewhere = await register(other, 'elsewhere', ['rates.changed', 'batch.completed']);
      const revoked = await newKey();
      await register(revoked, 'revoked', ['rates.changed']);
      await keys.revokeKey(revoked.id);

      assert.equal(await emit(owner, 'validation.completed'), 2);
      assert.equal(await emit(owner, 'vat_number.changed'), 1, 'only the endpoint without a list');
      const broadcast = await db.kysely.transaction().execute((trx) =>
        webhooks.enqueueBroadcasts(
          [
            {
              id: ids.uuid(),
              type: 'rates.changed',
              payload: '{"data":{}}',
              createdAt: clock.now().toISOString(),
            },
          ],
          trx,
        ),
      );
      assert.equal(broadcast, 2, 'every subscribed endpoint of a key in use, whichever key');

      const rows = await db.kysely.selectFrom('webhook_deliveries').selectAll().execute();
      const of = (id: string) =>
        rows
          .filter((r) => r.endpoint_id === id)
          .map((r) => r.event_type)
          .sort();
      assert.deepEqual(of(plain), ['validation.completed', 'vat_number.changed']);
      assert.deepEqual(of(listed), ['validation.completed']);
      assert.deepEqual(of(rates), ['rates.changed']);
      assert.deepEqual(of(elsewhere), ['rates.changed']);
      assert.equal(rows.find((r) => r.endpoint_id === elsewhere)?.key_id, other.id);
    });
  });
}
