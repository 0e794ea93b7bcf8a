import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type {
  Database,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookEndpointsTable,
} from '../../db/schema.js';
import { claimDueDeliveries } from './claim-repository.js';

export type DeliveryUpdate = Pick<
  WebhookDeliveriesTable,
  'status' | 'attempts' | 'next_attempt_at' | 'last_error' | 'finished_at'
>;

export function createWebhooksRepository(db: Kysely<Database>, dialect: Dialect) {
  return {
    /**
     * Serialises registrations of one key (PostgreSQL row lock on the key), so two concurrent
     * registrations cannot both pass the limit. SQLite has a single writer and needs nothing.
     */
    async lockKey(keyId: string, trx: Kysely<Database>): Promise<void> {
      if (dialect !== 'postgres') return;
      await trx.selectFrom('api_keys').select('id').where('id', '=', keyId).forUpdate().execute();
    },

    async countEndpoints(keyId: string, trx: Kysely<Database> = db): Promise<number> {
      const row = await trx
        .selectFrom('webhook_endpoints')
        .select((eb) => eb.fn.countAll<string | number>().as('n'))
        .where('key_id', '=', keyId)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async insertEndpoint(row: WebhookEndpointsTable, trx: Kysely<Database> = db): Promise<void> {
      await trx.insertInto('webhook_endpoints').values(row).execute();
    },

    async listEndpoints(keyId: string, trx: Kysely<Database> = db): Promise<WebhookEndpointsTable[]> {
      return trx
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('key_id', '=', keyId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
    },

    async findEndpoint(
      keyId: string,
      id: string,
      trx: Kysely<Database> = db,
    ): Promise<WebhookEndpointsTable | undefined> {
      return trx
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('key_id', '=', keyId)
        .where('id', '=', id)
        .executeTakeFirst();
    },

    async endpointById(id: string, trx: Kysely<Database> = db): Promise<WebhookEndpointsTable | undefined> {
      return trx.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
    },

    /**
     * Deletes an endpoint with its deliveries and attempts; false when the key has no such endpoint.
     * Ownership is checked (and, on PostgreSQL, the row locked) before anything is deleted.
     */
    async deleteEndpoint(keyId: string, id: string, trx: Kysely<Database> = db): Promise<boolean> {
      let owned = trx
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('key_id', '=', keyId)
        .where('id', '=', id);
      if (dialect === 'postgres') owned = owned.forUpdate();
      if (!(await owned.executeTakeFirst())) return false;
      await trx.deleteFrom('webhook_attempts').where('endpoint_id', '=', id).execute();
      await trx.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
      const result = await trx
        .deleteFrom('webhook_endpoints')
        .where('key_id', '=', keyId)
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** Changes an endpoint's state or subscription; false when the key has no such endpoint. */
    async updateEndpoint(
      keyId: string,
      id: string,
      changes: { disabled?: boolean; events?: string | null },
      trx: Kysely<Database> = db,
    ) {
      const result = await trx
        .updateTable('webhook_endpoints')
        .set({
          ...(changes.disabled !== undefined ? { disabled: changes.disabled ? 1 : 0 } : {}),
          ...(changes.events !== undefined ? { events: changes.events } : {}),
        })
        .where('key_id', '=', keyId)
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async activeEndpointIds(keyId: string, trx: Kysely<Database> = db): Promise<string[]> {
      const rows = await trx
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('key_id', '=', keyId)
        .where('disabled', '=', 0)
        .orderBy('id')
        .execute();
      return rows.map((r) => r.id);
    },

    /** The enabled endpoints of each of these keys, by key, with the events they subscribe to. */
    async activeEndpointsByKey(
      keyIds: readonly string[],
      trx: Kysely<Database> = db,
    ): Promise<Map<string, { id: string; events: string | null }[]>> {
      const byKey = new Map<string, { id: string; events: string | null }[]>();
      if (keyIds.length === 0) return byKey;
      const rows = await trx
        .selectFrom('webhook_endpoints')
        .select(['id', 'key_id', 'events'])
        .where('key_id', 'in', [...keyIds])
        .where('disabled', '=', 0)
        .orderBy('id')
        .execute();
      for (const row of rows) {
        const list = byKey.get(row.key_id) ?? [];
        list.push({ id: row.id, events: row.events });
        byKey.set(row.key_id, list);
      }
      return byKey;
    },

    /**
     * The enabled endpoints, of any key still in use (not revoked or expired, its account not
     * disabled), whose subscription names `type` (the caller checks the exact name).
     */
    async subscribedEndpoints(type: string, now: string, trx: Kysely<Database> = db) {
      return trx
        .selectFrom('webhook_endpoints as e')
        .innerJoin('api_keys as k', 'k.id', 'e.key_id')
        .innerJoin('accounts as a', 'a.id', 'k.account_id')
        .select(['e.id', 'e.key_id', 'e.events'])
        .where('e.disabled', '=', 0)
        .where('e.events', 'like', `%${JSON.stringify(type)}%`)
        .where('k.revoked_at', 'is', null)
        .where((eb) => eb.or([eb('k.expires_at', 'is', null), eb('k.expires_at', '>', now)]))
        .where((eb) => eb.or([eb('a.disabled', 'is', null), eb('a.disabled', '!=', 1)]))
        .orderBy('e.id')
        .execute();
    },

    async insertDeliveries(rows: WebhookDeliveriesTable[], trx: Kysely<Database> = db): Promise<void> {
      if (rows.length > 0) await trx.insertInto('webhook_deliveries').values(rows).execute();
    },

    /** Claims due deliveries under a lease, each endpoint and key within its share (claim-repository.ts). */
    claimDue(
      input: Parameters<typeof claimDueDeliveries>[2],
      trx: Kysely<Database> = db,
    ): Promise<WebhookDeliveriesTable[]> {
      return claimDueDeliveries(db, dialect, input, trx);
    },

    async insertAttempt(row: WebhookAttemptsTable, trx: Kysely<Database> = db): Promise<void> {
      await trx.insertInto('webhook_attempts').values(row).execute();
    },

    /**
     * Writes the outcome of an attempt and releases the lease, provided this worker still holds it
     * (a worker whose lease expired and was taken over must not overwrite the newer state).
     */
    async finishAttempt(
      id: string,
      workerId: string,
      update: DeliveryUpdate,
      trx: Kysely<Database> = db,
    ): Promise<boolean> {
      const result = await trx
        .updateTable('webhook_deliveries')
        .set({ ...update, locked_until: null, claimed_by: null })
        .where('id', '=', id)
        .where('claimed_by', '=', workerId)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /** Gives a claimed delivery back untouched (the worker is stopping). */
    async release(id: string, workerId: string, trx: Kysely<Database> = db): Promise<void> {
      await trx
        .updateTable('webhook_deliveries')
        .set({ locked_until: null, claimed_by: null })
        .where('id', '=', id)
        .where('claimed_by', '=', workerId)
        .execute();
    },

    async lastAttempt(endpointId: string, trx: Kysely<Database> = db) {
      return trx
        .selectFrom('webhook_attempts')
        .select(['status', 'created_at', 'http_status'])
        .where('endpoint_id', '=', endpointId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
    },

    /** Status of the endpoint's most recently finished delivery that was actually attempted. */
    async lastFinishedStatus(endpointId: string, trx: Kysely<Database> = db): Promise<string | null> {
      const row = await trx
        .selectFrom('webhook_deliveries')
        .select('status')
        .where('endpoint_id', '=', endpointId)
        .where('finished_at', 'is not', null)
        .where('attempts', '>', 0)
        .orderBy('finished_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row?.status ?? null;
    },

    async listDeliveries(endpointId: string, limit: number, trx: Kysely<Database> = db) {
      return trx
        .selectFrom('webhook_deliveries')
        .select([
          'id',
          'event_id',
          'event_type',
          'status',
          'attempts',
          'max_attempts',
          'next_attempt_at',
          'last_error',
          'created_at',
          'finished_at',
        ])
        .where('endpoint_id', '=', endpointId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
    },

    async attemptsOf(deliveryIds: string[], trx: Kysely<Database> = db): Promise<WebhookAttemptsTable[]> {
      if (deliveryIds.length === 0) return [];
      return trx
        .selectFrom('webhook_attempts')
        .selectAll()
        .where('delivery_id', 'in', deliveryIds)
        .orderBy('delivery_id')
        .orderBy('attempt')
        .execute();
    },

    async findDelivery(
      endpointId: string,
      id: string,
      trx: Kysely<Database> = db,
    ): Promise<WebhookDeliveriesTable | undefined> {
      return trx
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('endpoint_id', '=', endpointId)
        .where('id', '=', id)
        .executeTakeFirst();
    },

    /** Puts a finished delivery back in the queue with a fresh budget of attempts. */
    async requeue(
      id: string,
      input: { now: string; maxAttempts: number },
      trx: Kysely<Database> = db,
    ): Promise<boolean> {
      const result = await trx
        .updateTable('webhook_deliveries')
        .set({
          status: 'pending',
          next_attempt_at: input.now,
          max_attempts: input.maxAttempts,
          finished_at: null,
          locked_until: null,
          claimed_by: null,
        })
        .where('id', '=', id)
        .where('status', '!=', 'pending')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
  };
}

export type WebhooksRepository = ReturnType<typeof createWebhooksRepository>;
