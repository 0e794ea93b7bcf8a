import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * The webhook claim also counts each key's deliveries under an unexpired lease (a key's share of the
 * delivery slots, across all its endpoints): the index of leased rows carries the key, so both counts
 * read the deliveries in flight and nothing else.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_leased_idx').execute();
  await db.schema
    .createIndex('webhook_deliveries_leased_idx')
    .on('webhook_deliveries')
    .columns(['locked_until', 'endpoint_id', 'key_id'])
    .where(sql.ref('locked_until'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_leased_idx').execute();
  await db.schema
    .createIndex('webhook_deliveries_leased_idx')
    .on('webhook_deliveries')
    .columns(['locked_until', 'endpoint_id'])
    .where(sql.ref('locked_until'), 'is not', null)
    .execute();
}
