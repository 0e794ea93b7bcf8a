import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A VAT number kept checked for an API key: its last known state and its durable schedule
  // (`next_check_at`, claimed by scheduler instances under a lease like batch items).
  await db.schema
    .createTable('monitors')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('key_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('account_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('plan', 'varchar(16)', (c) => c.notNull())
    .addColumn('mode', 'varchar(8)', (c) => c.notNull())
    .addColumn('vat_number', 'varchar(32)', (c) => c.notNull())
    .addColumn('country', 'varchar(8)', (c) => c.notNull())
    .addColumn('interval', 'varchar(8)', (c) => c.notNull())
    .addColumn('reference', 'varchar(256)')
    .addColumn('metadata', 'text')
    .addColumn('status', 'varchar(8)', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('address', 'text')
    .addColumn('source', 'varchar(8)')
    .addColumn('stale', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('checks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_checked_at', 'varchar(30)')
    .addColumn('last_attempt_at', 'varchar(30)')
    .addColumn('failing_since', 'varchar(30)')
    .addColumn('last_error', 'text')
    .addColumn('last_change_at', 'varchar(30)')
    .addColumn('next_check_at', 'varchar(30)', (c) => c.notNull())
    .addColumn('locked_until', 'varchar(30)')
    .addColumn('claimed_by', 'varchar(64)')
    .addColumn('created_at', 'varchar(30)', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('monitors_key_number_idx')
    .on('monitors')
    .columns(['key_id', 'vat_number'])
    .unique()
    .execute();
  await db.schema.createIndex('monitors_key_id_idx').on('monitors').columns(['key_id', 'id']).execute();
  // Lists filtered by status or by recent change, without reading every monitor of a large key.
  await db.schema
    .createIndex('monitors_key_status_idx')
    .on('monitors')
    .columns(['key_id', 'status', 'id'])
    .execute();
  await db.schema
    .createIndex('monitors_key_change_idx')
    .on('monitors')
    .columns(['key_id', 'last_change_at'])
    .execute();
  await db.schema
    .createIndex('monitors_due_idx')
    .on('monitors')
    .columns(['next_check_at', 'id', 'country', 'locked_until'])
    .execute();

  // Every check of a monitor: its outcome, and the audit record of the call when it reached a registry.
  await db.schema
    .createTable('monitor_checks')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('monitor_id', 'varchar(36)', (c) => c.notNull().references('monitors.id').onDelete('cascade'))
    .addColumn('trigger', 'varchar(12)', (c) => c.notNull())
    .addColumn('outcome', 'varchar(12)', (c) => c.notNull())
    .addColumn('source', 'varchar(8)')
    .addColumn('source_status', 'varchar(10)')
    .addColumn('name', 'text')
    .addColumn('address', 'text')
    .addColumn('error', 'text')
    .addColumn('request_id', 'varchar(36)')
    .addColumn('checked_at', 'varchar(30)', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('monitor_checks_monitor_idx')
    .on('monitor_checks')
    .columns(['monitor_id', 'checked_at'])
    .execute();
  // The retention purge deletes the oldest checks first.
  await db.schema
    .createIndex('monitor_checks_time_idx')
    .on('monitor_checks')
    .columns(['checked_at'])
    .execute();

  // Each change a check found (valid → invalid, name changed, …) with the values before and after.
  await db.schema
    .createTable('monitor_changes')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('monitor_id', 'varchar(36)', (c) => c.notNull().references('monitors.id').onDelete('cascade'))
    .addColumn('key_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('check_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('kind', 'varchar(20)', (c) => c.notNull())
    .addColumn('before', 'text')
    .addColumn('after', 'text')
    .addColumn('detected_at', 'varchar(30)', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('monitor_changes_monitor_idx')
    .on('monitor_changes')
    .columns(['monitor_id', 'detected_at'])
    .execute();
  await db.schema
    .createIndex('monitor_changes_key_idx')
    .on('monitor_changes')
    .columns(['key_id', 'detected_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('monitor_changes').execute();
  await db.schema.dropTable('monitor_checks').execute();
  await db.schema.dropTable('monitors').execute();
}
