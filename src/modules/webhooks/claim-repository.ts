import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database, WebhookDeliveriesTable } from '../../db/schema.js';

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
export async function claimDueDeliveries(
  db: Kysely<Database>,
  dialect: Dialect,
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
}
