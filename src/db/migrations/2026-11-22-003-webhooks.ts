import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('key_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('account_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('url', 'varchar(2048)', (c) => c.notNull())
    .addColumn('secret', 'varchar(128)', (c) => c.notNull())
    .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'varchar(30)', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_endpoints_key_idx')
    .on('webhook_endpoints')
    .columns(['key_id', 'created_at'])
    .execute();

  // The durable queue: one row per (event, endpoint), claimed by workers with a lease.
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('endpoint_id', 'varchar(36)', (c) =>
      c.notNull().references('webhook_endpoints.id').onDelete('cascade'),
    )
    .addColumn('key_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('event_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('event_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'varchar(30)')
    .addColumn('locked_until', 'varchar(30)')
    .addColumn('claimed_by', 'varchar(64)')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'varchar(30)', (c) => c.notNull())
    .addColumn('finished_at', 'varchar(30)')
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_endpoint_idx')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_finished_idx')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'finished_at'])
    .execute();

  // The attempt log: one row per HTTP attempt; `id` is the attempt's Service-Delivery-Id.
  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('delivery_id', 'varchar(36)', (c) =>
      c.notNull().references('webhook_deliveries.id').onDelete('cascade'),
    )
    .addColumn('endpoint_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('http_status', 'integer')
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('created_at', 'varchar(30)', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_attempts_delivery_idx')
    .on('webhook_attempts')
    .columns(['delivery_id', 'attempt'])
    .execute();
  await db.schema
    .createIndex('webhook_attempts_endpoint_idx')
    .on('webhook_attempts')
    .columns(['endpoint_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_attempts').execute();
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
}
