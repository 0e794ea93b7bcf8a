import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // When the answer a record holds could not be written to its client (the connection closed after
  // the record was committed); null when it was written.
  await db.schema.alterTable('audits').addColumn('undelivered_at', 'varchar(32)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audits').dropColumn('undelivered_at').execute();
}
