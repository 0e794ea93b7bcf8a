import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The last answer of an EORI service per number: the cache, and the stored answer served while
  // the service is down (degraded). Apart from `registry_answers`: an EORI number and a VAT number
  // may be written alike (`DE123456789`) and mean different registrations.
  await db.schema
    .createTable('eori_answers')
    .addColumn('eori', 'varchar(20)', (c) => c.primaryKey())
    .addColumn('source', 'varchar(8)', (c) => c.notNull())
    .addColumn('valid', 'integer', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('street', 'text')
    .addColumn('postal_code', 'text')
    .addColumn('city', 'text')
    .addColumn('country', 'text')
    .addColumn('upstream_status', 'varchar(64)', (c) => c.notNull())
    .addColumn('checked_at', 'varchar(30)', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('eori_answers').execute();
}
