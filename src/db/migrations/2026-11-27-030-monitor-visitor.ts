import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The address that created a monitor of the playground's demo key (a hash of it), which caps
  // each visitor's share of that shared key; null for every other key.
  await db.schema.alterTable('monitors').addColumn('visitor', 'varchar(64)').execute();
  await db.schema
    .createIndex('monitors_key_visitor_idx')
    .on('monitors')
    .columns(['key_id', 'visitor', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('monitors_key_visitor_idx').execute();
  await db.schema.alterTable('monitors').dropColumn('visitor').execute();
}
