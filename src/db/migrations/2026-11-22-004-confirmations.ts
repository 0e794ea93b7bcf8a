import type { Kysely } from 'kysely';

/** The hash the first confirmation links to: 64 zeros. */
const GENESIS_HASH = '0'.repeat(64);

export async function up(db: Kysely<unknown>): Promise<void> {
  // Qualified confirmations, kept 10 years as evidence. Each row is one link of a hash chain over
  // every confirmation (`seq` 1, 2, 3, …; `prev_hash` is the previous row's `hash`).
  await db.schema
    .createTable('confirmations')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('seq', 'integer', (c) => c.notNull().unique())
    .addColumn('account_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('key_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('request_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('mode', 'varchar(8)', (c) => c.notNull())
    .addColumn('vat_number', 'varchar(64)', (c) => c.notNull())
    .addColumn('requester_vat_number', 'varchar(16)', (c) => c.notNull())
    .addColumn('taxauth_status', 'varchar(32)', (c) => c.notNull())
    .addColumn('valid', 'integer', (c) => c.notNull())
    .addColumn('qualified', 'integer', (c) => c.notNull())
    .addColumn('api_request', 'text', (c) => c.notNull())
    .addColumn('upstream_url', 'text', (c) => c.notNull())
    .addColumn('upstream_request', 'text', (c) => c.notNull())
    .addColumn('upstream_response', 'text', (c) => c.notNull())
    .addColumn('upstream_http_status', 'integer', (c) => c.notNull())
    .addColumn('upstream_id', 'varchar(128)')
    .addColumn('response', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(30)', (c) => c.notNull())
    .addColumn('retain_until', 'varchar(30)', (c) => c.notNull())
    .addColumn('prev_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('hash', 'varchar(64)', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('confirmations_account_idx')
    .on('confirmations')
    .columns(['account_id', 'created_at'])
    .execute();

  // One row (id = 1): the last appended link. Appending updates it first, which serialises appends
  // on both databases (a row lock on PostgreSQL, the write lock on SQLite) and lets the verifier
  // notice rows deleted from the end of the chain.
  await db.schema
    .createTable('confirmation_chain_head')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('hash', 'varchar(64)', (c) => c.notNull())
    .execute();
  await (db as Kysely<{ confirmation_chain_head: { id: number; seq: number; hash: string } }>)
    .insertInto('confirmation_chain_head')
    .values({ id: 1, seq: 0, hash: GENESIS_HASH })
    .execute();

  // Idempotency keys of POST /v1/confirm, per account, for 24 hours.
  await db.schema
    .createTable('confirmation_idempotency')
    .addColumn('account_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('idempotency_key', 'varchar(36)', (c) => c.notNull())
    .addColumn('fingerprint', 'varchar(64)', (c) => c.notNull())
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('owner', 'varchar(36)', (c) => c.notNull())
    .addColumn('key_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('confirmation_id', 'varchar(36)')
    .addColumn('status_code', 'integer')
    .addColumn('response', 'text')
    .addColumn('created_at', 'varchar(30)', (c) => c.notNull())
    .addColumn('locked_at', 'varchar(30)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(30)', (c) => c.notNull())
    .addPrimaryKeyConstraint('confirmation_idempotency_pk', ['account_id', 'idempotency_key'])
    .execute();
  await db.schema
    .createIndex('confirmation_idempotency_expires_idx')
    .on('confirmation_idempotency')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('confirmation_idempotency').execute();
  await db.schema.dropTable('confirmation_chain_head').execute();
  await db.schema.dropTable('confirmations').execute();
}
