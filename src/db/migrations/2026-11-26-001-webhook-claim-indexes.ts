import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * The webhook claim takes each endpoint's oldest due deliveries, at most a few per endpoint, and
 * counts the deliveries each endpoint already has under an unexpired lease:
 * - `webhook_deliveries_claim_idx` walks the endpoints that have pending deliveries one index seek
 *   at a time and reads each one's due rows in claim order (next attempt, then id);
 * - `webhook_deliveries_leased_idx` holds only leased rows, so counting them reads the deliveries in
 *   flight and nothing else.
 * The claim no longer reads the queue in global due order, so the index for that order goes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_claim_idx')
    .on('webhook_deliveries')
    .columns(['status', 'endpoint_id', 'next_attempt_at', 'id'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_leased_idx')
    .on('webhook_deliveries')
    .columns(['locked_until', 'endpoint_id'])
    .where(sql.ref('locked_until'), 'is not', null)
    .execute();
  await db.schema.dropIndex('webhook_deliveries_due_idx').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute();
  await db.schema.dropIndex('webhook_deliveries_leased_idx').execute();
  await db.schema.dropIndex('webhook_deliveries_claim_idx').execute();
}
