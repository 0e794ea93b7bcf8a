import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The parts a batch job's items add to their answers (`"include": ["peppol"]`), comma-separated;
  // null for none. Read with the job (its request body is not).
  await db.schema.alterTable('batch_jobs').addColumn('include', 'varchar(100)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('batch_jobs').dropColumn('include').execute();
}
