import type { Kysely } from 'kysely';

/**
 * The batch claim reads due items in rank order and filters them by country, next attempt and lease.
 * With those columns in the index, the scan reads the index alone instead of each item's row, and a
 * progress count reads `ok` from the job index the same way.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('batch_items_due_idx').execute();
  await db.schema
    .createIndex('batch_items_due_idx')
    .on('batch_items')
    .columns(['status', 'rank', 'id', 'country', 'next_attempt_at', 'locked_until'])
    .execute();
  await db.schema.dropIndex('batch_items_job_idx').execute();
  await db.schema
    .createIndex('batch_items_job_idx')
    .on('batch_items')
    .columns(['job_id', 'status', 'position', 'ok'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('batch_items_job_idx').execute();
  await db.schema
    .createIndex('batch_items_job_idx')
    .on('batch_items')
    .columns(['job_id', 'status', 'position'])
    .execute();
  await db.schema.dropIndex('batch_items_due_idx').execute();
  await db.schema
    .createIndex('batch_items_due_idx')
    .on('batch_items')
    .columns(['status', 'rank', 'id'])
    .execute();
}
