import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The last Peppol look-up per participant identifier (`ICD:value`): the cache, and the stored
  // answer served while the SML cannot be asked (degraded). `answer` is the participant's part of
  // the response as JSON; `expires_at` when it must be asked again.
  await db.schema
    .createTable('peppol_answers')
    .addColumn('participant_id', 'varchar(140)', (c) => c.primaryKey())
    .addColumn('answer', 'text', (c) => c.notNull())
    .addColumn('checked_at', 'varchar(30)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(30)', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('peppol_answers').execute();
}
