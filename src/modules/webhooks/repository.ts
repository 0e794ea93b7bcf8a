import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type {
  Database,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookEndpointsTable,
} from '../../db/schema.js';

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

    async setDisabled(keyId: string, id: string, disabled: boolean, trx: Kysely<Database> = db) {
      const result = await trx
        .updateTable('webhook_endpoints')
        .set({ disabled: disabled ? 1 : 0 })
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

    /** The enabled endpoints of each of these keys, by key. */
    async activeEndpointIdsByKey(
      keyIds: readonly string[],
      trx: Kysely<Database> = db,
    ): Promise<Map<string, string[]>> {
      const byKey = new Map<string, string[]>();
      if (keyIds.length === 0) return byKey;
      const rows = await trx
        .selectFrom('webhook_endpoints')
        .select(['id', 'key_id'])
        .where('key_id', 'in', [...keyIds])
        .where('disabled', '=', 0)
        .orderBy('id')
        .execute();
      for (const row of rows) byKey.set(row.key_id, [...(byKey.get(row.key_id) ?? []), row.id]);
      return byKey;
    },

    async insertDeliveries(rows: WebhookDeliveriesTable[], trx: Kysely<Database> = db): Promise<void> {
      if (rows.length > 0) await trx.insertInto('webhook_deliveries').values(rows).execute();
    },

    /**
     * Claims up to `limit` due pending deliveries under a lease, leaving every endpoint with at most
     * `perEndpoint` and every key with at most `perKey` (across all its endpoints) deliveries under an
     * unexpired lease, whoever holds them. Keys take turns: the key with the fewest deliveries in
     * flight goes first, then within a key its endpoints with the fewest, then the oldest due.
     *
     * One statement: it walks the endpoints that have pending deliveries, one seek each in
     * `webhook_deliveries_claim_idx` (ordering by all of that index's columns makes it the one that
     * serves the walk), counts their leases in `webhook_deliveries_leased_idx`, skips those already
     * at their share, bounds each other endpoint's due rows at its share-th oldest, ranks those
     * (`CROSS JOIN` keeps the endpoints as the outer loop on SQLite, so each endpoint's rows are
     * read by index), skips keys already at their share, ranks the rest again by key (the key's
     * leases, plus the place in turn of the key's endpoints) and leases the first `limit` whose key
     * rank fits the key's free share, lowest key rank first. The cost grows with the number of
     * endpoints, not with the length of any one endpoint's queue.
     * On PostgreSQL the claims of every instance take one transaction-scoped advisory lock first,
     * so each counts the leases the previous one committed and the share holds across instances;
     * on SQLite the single writer makes the statement atomic.
     */
    async claimDue(
      input: {
        now: string;
        leaseUntil: string;
        workerId: string;
        limit: number;
        perEndpoint: number;
        perKey: number;
      },
      trx: Kysely<Database> = db,
    ): Promise<WebhookDeliveriesTable[]> {
      if (input.limit <= 0 || input.perEndpoint <= 0 || input.perKey <= 0) return [];
      const { now, perEndpoint, perKey } = input;
      const claim = async (conn: Kysely<Database>) => {
        if (dialect === 'postgres') {
          await sql`SELECT pg_advisory_xact_lock(hashtext(current_schema()), hashtext('webhook_deliveries claim'))`.execute(
            conn,
          );
        }
        const due = sql`status = 'pending' AND next_attempt_at <= ${now} AND (locked_until IS NULL OR locked_until <= ${now})`;
        const { rows } = await sql<WebhookDeliveriesTable>`
          UPDATE webhook_deliveries
          SET locked_until = ${input.leaseUntil}, claimed_by = ${input.workerId}
          WHERE ${due} AND id IN (
            WITH RECURSIVE queued (endpoint_id) AS (
              SELECT (
                SELECT endpoint_id FROM webhook_deliveries
                WHERE status = 'pending' ORDER BY endpoint_id, next_attempt_at, id LIMIT 1
              )
              UNION ALL
              SELECT (
                SELECT n.endpoint_id FROM webhook_deliveries n
                WHERE n.status = 'pending' AND n.endpoint_id > queued.endpoint_id
                ORDER BY n.endpoint_id, n.next_attempt_at, n.id LIMIT 1
              )
              FROM queued WHERE queued.endpoint_id IS NOT NULL
            ),
            leases (endpoint_id, key_id) AS (
              SELECT endpoint_id, key_id FROM webhook_deliveries
              WHERE locked_until IS NOT NULL AND locked_until > ${now} AND status = 'pending'
            ),
            in_flight (endpoint_id, n) AS (
              SELECT endpoint_id, COUNT(*) FROM leases GROUP BY endpoint_id
            ),
            key_in_flight (key_id, n) AS (
              SELECT key_id, COUNT(*) FROM leases GROUP BY key_id
            ),
            open_endpoints (endpoint_id, key_id, leased, key_leased) AS (
              SELECT queued.endpoint_id, e.key_id, COALESCE(in_flight.n, 0), COALESCE(key_in_flight.n, 0)
              FROM queued
              JOIN webhook_endpoints e ON e.id = queued.endpoint_id
              LEFT JOIN in_flight ON in_flight.endpoint_id = queued.endpoint_id
              LEFT JOIN key_in_flight ON key_in_flight.key_id = e.key_id
              WHERE queued.endpoint_id IS NOT NULL AND COALESCE(in_flight.n, 0) < ${perEndpoint}
                AND COALESCE(key_in_flight.n, 0) < ${perKey}
            ),
            bounded (endpoint_id, key_id, leased, key_leased, last_at, last_id) AS (
              SELECT o.endpoint_id, o.key_id, o.leased, o.key_leased, nth.next_attempt_at, nth.id
              FROM open_endpoints o JOIN webhook_deliveries nth ON nth.id = COALESCE(
                (
                  SELECT c.id FROM webhook_deliveries c
                  WHERE c.status = 'pending' AND c.endpoint_id = o.endpoint_id
                    AND c.next_attempt_at <= ${now} AND (c.locked_until IS NULL OR c.locked_until <= ${now})
                  ORDER BY c.next_attempt_at, c.id LIMIT 1 OFFSET ${perEndpoint - 1}
                ),
                (
                  SELECT c.id FROM webhook_deliveries c
                  WHERE c.status = 'pending' AND c.endpoint_id = o.endpoint_id
                    AND c.next_attempt_at <= ${now} AND (c.locked_until IS NULL OR c.locked_until <= ${now})
                  ORDER BY c.next_attempt_at DESC, c.id DESC LIMIT 1
                )
              )
            ),
            ranked (id, key_id, key_leased, next_attempt_at, place) AS (
              SELECT d.id, b.key_id, b.key_leased, d.next_attempt_at,
                b.leased + ROW_NUMBER() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id)
              FROM bounded b CROSS JOIN webhook_deliveries d
              WHERE d.status = 'pending' AND d.endpoint_id = b.endpoint_id
                AND (d.next_attempt_at, d.id) <= (b.last_at, b.last_id)
                AND (d.locked_until IS NULL OR d.locked_until <= ${now})
            ),
            key_ranked (id, next_attempt_at, key_place) AS (
              SELECT id, next_attempt_at,
                key_leased + ROW_NUMBER() OVER (PARTITION BY key_id ORDER BY place, next_attempt_at, id)
              FROM ranked WHERE place <= ${perEndpoint}
            )
            SELECT id FROM key_ranked WHERE key_place <= ${perKey}
            ORDER BY key_place, next_attempt_at, id LIMIT ${input.limit}
          )
          RETURNING *`.execute(conn);
        // RETURNING has no order: hand the rows out oldest due first.
        const key = (row: WebhookDeliveriesTable) => `${row.next_attempt_at ?? ''} ${row.id}`;
        return rows.sort((a, b) => (key(a) < key(b) ? -1 : 1));
      };
      if (dialect === 'postgres' && !trx.isTransaction) return trx.transaction().execute(claim);
      return claim(trx);
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
