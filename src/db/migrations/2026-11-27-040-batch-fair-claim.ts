import type { Kysely } from 'kysely';

/**
 * The batch claim takes turns by key, then by job within a key:
 * - `batch_jobs_unfinished_idx` finds the queued and running jobs (the claim walks them) and counts
 *   a key's unfinished jobs (the per-plan limit on queued jobs);
 * - `batch_items_claim_idx` reads one job's due items in claim order (rank, then id), with the
 *   columns the claim filters on, so a job's first items are read without touching the table.
 * The claim no longer reads every job's items in one global order, so the index for that order goes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('batch_jobs_unfinished_idx')
    .on('batch_jobs')
    .columns(['status', 'key_id'])
    .execute();
  await db.schema
    .createIndex('batch_items_claim_idx')
    .on('batch_items')
    .columns(['job_id', 'status', 'rank', 'id', 'country', 'next_attempt_at', 'locked_until'])
    .execute();
  await db.schema.dropIndex('batch_items_due_idx').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('batch_items_due_idx')
    .on('batch_items')
    .columns(['status', 'rank', 'id', 'country', 'next_attempt_at', 'locked_until'])
    .execute();
  await db.schema.dropIndex('batch_items_claim_idx').execute();
  await db.schema.dropIndex('batch_jobs_unfinished_idx').execute();
}
