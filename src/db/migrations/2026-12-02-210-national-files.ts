import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The local copy of the national registers' published files (SI FURS, LV VID), shared by every
  // instance on the database. A part (one published file) is one row here, naming the generation of
  // rows that answers; a sync writes a new generation beside it and swaps the part's row over to it
  // only when the whole file was read, so a failed or cut-short download never replaces a copy.
  await db.schema
    .createTable('national_file_parts')
    .addColumn('source', 'varchar(32)', (c) => c.notNull())
    .addColumn('part', 'varchar(16)', (c) => c.notNull())
    .addColumn('generation', 'varchar(40)', (c) => c.notNull())
    .addColumn('data_date', 'varchar(10)', (c) => c.notNull())
    .addColumn('etag', 'text')
    .addColumn('last_modified', 'text')
    .addColumn('encoding', 'varchar(32)', (c) => c.notNull())
    .addColumn('rows', 'integer', (c) => c.notNull())
    .addColumn('fetched_at', 'varchar(30)', (c) => c.notNull())
    .addColumn('checked_at', 'varchar(30)', (c) => c.notNull())
    .addPrimaryKeyConstraint('national_file_parts_pk', ['source', 'part'])
    .execute();
  await db.schema
    .createTable('national_file_rows')
    .addColumn('source', 'varchar(32)', (c) => c.notNull())
    .addColumn('part', 'varchar(16)', (c) => c.notNull())
    .addColumn('generation', 'varchar(40)', (c) => c.notNull())
    .addColumn('number', 'varchar(20)', (c) => c.notNull())
    // The row as the file gives it (status, name, address, dates, identifiers), as JSON text.
    .addColumn('row', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('national_file_rows_number')
    .on('national_file_rows')
    .columns(['source', 'number'])
    .execute();
  await db.schema
    .createIndex('national_file_rows_generation')
    .on('national_file_rows')
    .columns(['source', 'part', 'generation'])
    .execute();
  // The sync of each file register, claimed under a lease so one instance at a time downloads its
  // files (the scheduled run and `openvat registers sync` alike), with how its last run ended.
  await db.schema
    .createTable('national_file_syncs')
    .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
    .addColumn('locked_until', 'varchar(30)')
    .addColumn('claimed_by', 'varchar(64)')
    .addColumn('next_run_at', 'varchar(30)', (c) => c.notNull())
    .addColumn('last_run_at', 'varchar(30)')
    .addColumn('last_success_at', 'varchar(30)')
    .addColumn('last_error', 'text')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('national_file_syncs').execute();
  await db.schema.dropTable('national_file_rows').execute();
  await db.schema.dropTable('national_file_parts').execute();
}
