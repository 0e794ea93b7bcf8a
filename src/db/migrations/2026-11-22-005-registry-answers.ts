import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The last answer of a registry per VAT number: the cache, and the stored answer served while the
  // registry is down (degraded).
  await db.schema
    .createTable('registry_answers')
    .addColumn('vat_number', 'varchar(32)', (c) => c.primaryKey())
    .addColumn('source', 'varchar(8)', (c) => c.notNull())
    .addColumn('valid', 'integer', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('address', 'text')
    .addColumn('checked_at', 'varchar(30)', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('registry_answers').execute();
}
