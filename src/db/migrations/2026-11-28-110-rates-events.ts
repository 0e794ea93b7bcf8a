import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The events an endpoint subscribes to, as a JSON array; null keeps the default events of its key.
  await db.schema.alterTable('webhook_endpoints').addColumn('events', 'text').execute();
  // `rates.changed` events: not caused by one key, delivered to every endpoint that subscribes. The
  // unique index makes every instance that notices the same change insert it once.
  await db.schema
    .createTable('rate_events')
    .addColumn('id', 'varchar(36)', (col) => col.primaryKey())
    .addColumn('country_code', 'varchar(2)', (col) => col.notNull())
    .addColumn('effective_from', 'varchar(10)', (col) => col.notNull())
    // announced | in_force
    .addColumn('kind', 'varchar(16)', (col) => col.notNull())
    // The rates from `effective_from` on, as JSON text: part of the key, so a corrected announcement is sent.
    .addColumn('rates', 'varchar(200)', (col) => col.notNull())
    .addColumn('source', 'varchar(16)', (col) => col.notNull())
    .addColumn('payload', 'text', (col) => col.notNull())
    .addColumn('created_at', 'varchar(30)', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('rate_events_key_idx')
    .on('rate_events')
    .columns(['country_code', 'effective_from', 'kind', 'rates'])
    .unique()
    .execute();
  // Up to when the starts of periods have been looked for (a period that started since is in force now).
  await db.schema
    .createTable('rate_event_checks')
    .addColumn('id', 'varchar(32)', (col) => col.primaryKey())
    .addColumn('since', 'varchar(30)', (col) => col.notNull())
    .addColumn('checked_at', 'varchar(30)', (col) => col.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('rate_event_checks').execute();
  await db.schema.dropTable('rate_events').execute();
  await db.schema.alterTable('webhook_endpoints').dropColumn('events').execute();
}
