import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // What the rates sync learnt: the rates of a country from a day on, layered over the curated dataset.
  await db.schema
    .createTable('rate_changes')
    .addColumn('id', 'varchar(36)', (col) => col.primaryKey())
    .addColumn('country_code', 'varchar(2)', (col) => col.notNull())
    .addColumn('valid_from', 'varchar(10)', (col) => col.notNull())
    // {standard_rate, reduced_rates, super_reduced_rate, parking_rate} as JSON text (exact decimals).
    .addColumn('rates', 'text', (col) => col.notNull())
    .addColumn('source', 'varchar(16)', (col) => col.notNull())
    .addColumn('learnt_at', 'varchar(30)', (col) => col.notNull())
    // applied | held | rejected | superseded | withdrawn
    .addColumn('status', 'varchar(16)', (col) => col.notNull())
    .addColumn('reason', 'text')
    .addColumn('decided_at', 'varchar(30)')
    .addColumn('decided_by', 'text')
    .execute();
  await db.schema
    .createIndex('rate_changes_country_idx')
    .on('rate_changes')
    .columns(['country_code', 'valid_from'])
    .execute();
  // One row per scheduled sync, claimed under a lease so that one instance at a time runs it.
  await db.schema
    .createTable('rate_syncs')
    .addColumn('id', 'varchar(32)', (col) => col.primaryKey())
    .addColumn('locked_until', 'varchar(30)')
    .addColumn('claimed_by', 'varchar(64)')
    .addColumn('next_run_at', 'varchar(30)', (col) => col.notNull())
    .addColumn('last_run_at', 'varchar(30)')
    .addColumn('last_success_at', 'varchar(30)')
    .addColumn('last_error', 'text')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('rate_syncs').execute();
  await db.schema.dropTable('rate_changes').execute();
}
