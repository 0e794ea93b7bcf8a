import type { Kysely } from 'kysely';

/**
 * The operators' side: admin keys, accounts that can be named, searched and disabled, keys with a
 * lifecycle (name, expiry, scopes, address allowlist, own limits, roll), calls per key and month for
 * quotas, and the append-only log of admin writes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('admin_keys')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('role', 'varchar(16)', (c) => c.notNull())
    .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('key_prefix', 'varchar(32)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(30)', (c) => c.notNull())
    .addColumn('revoked_at', 'varchar(30)')
    .addColumn('last_used_at', 'varchar(30)')
    .execute();

  await db.schema.alterTable('accounts').addColumn('external_id', 'varchar(200)').execute();
  await db.schema.alterTable('accounts').addColumn('metadata', 'text').execute();
  await db.schema
    .alterTable('accounts')
    .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('accounts').addColumn('updated_at', 'varchar(30)').execute();
  await db.schema.createIndex('accounts_external_id_idx').on('accounts').column('external_id').execute();

  for (const [name, type] of [
    ['name', 'text'],
    ['expires_at', 'varchar(30)'],
    ['scopes', 'text'],
    ['ip_allowlist', 'text'],
    ['rate_limit_per_minute', 'integer'],
    ['monthly_quota', 'bigint'],
    ['metadata', 'text'],
    ['last_used_at', 'varchar(30)'],
    ['rolled_to', 'varchar(36)'],
    ['updated_at', 'varchar(30)'],
  ] as const) {
    await db.schema.alterTable('api_keys').addColumn(name, type).execute();
  }

  await db.schema
    .createTable('key_month_calls')
    .addColumn('key_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('month', 'varchar(7)', (c) => c.notNull())
    .addColumn('calls', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('key_month_calls_pk', ['key_id', 'month'])
    .execute();

  await db.schema
    .createTable('admin_audit_log')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('actor_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('actor_name', 'text', (c) => c.notNull())
    .addColumn('action', 'varchar(64)', (c) => c.notNull())
    .addColumn('target_type', 'varchar(32)', (c) => c.notNull())
    .addColumn('target_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('changes', 'text', (c) => c.notNull())
    .addColumn('request_id', 'varchar(36)')
    .addColumn('client_address', 'varchar(64)')
    .addColumn('created_at', 'varchar(30)', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('admin_audit_log_target_idx')
    .on('admin_audit_log')
    .columns(['target_id', 'id'])
    .execute();
  await db.schema
    .createIndex('admin_audit_log_actor_idx')
    .on('admin_audit_log')
    .columns(['actor_id', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('admin_audit_log').execute();
  await db.schema.dropTable('key_month_calls').execute();
  await db.schema.dropTable('admin_keys').execute();
}
