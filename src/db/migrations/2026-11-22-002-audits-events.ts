import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audits')
    .addColumn('request_id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('key_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('endpoint', 'varchar(32)', (c) => c.notNull())
    .addColumn('response', 'text', (c) => c.notNull())
    .addColumn('request_body', 'text')
    .addColumn('created_at', 'varchar(30)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(30)', (c) => c.notNull())
    .addColumn('latency_ms', 'integer')
    .addColumn('status_code', 'integer')
    .addColumn('valid', 'integer')
    .execute();
  await db.schema.createIndex('audits_expires_idx').on('audits').column('expires_at').execute();

  await db.schema
    .createTable('events')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('account_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('key_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('type', 'varchar(64)', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(30)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_key_idx').on('events').columns(['key_id', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('events').execute();
  await db.schema.dropTable('audits').execute();
}
