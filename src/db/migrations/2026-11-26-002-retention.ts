import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Why a job ended without completing (`key_revoked`); null for every other job.
  await db.schema.alterTable('batch_jobs').addColumn('cancel_reason', 'varchar(32)').execute();
  // The retention purge finds ended jobs by the time they ended.
  await db.schema.createIndex('batch_jobs_ended_idx').on('batch_jobs').columns(['completed_at']).execute();
  // A key's monitors by age: the playground's demo key keeps its monitors 24 hours.
  await db.schema
    .createIndex('monitors_key_created_idx')
    .on('monitors')
    .columns(['key_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('monitors_key_created_idx').execute();
  await db.schema.dropIndex('batch_jobs_ended_idx').execute();
  await db.schema.alterTable('batch_jobs').dropColumn('cancel_reason').execute();
}
