import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A batch job (`POST /v1/validate/batch` with `"async": true`): who asked, and how it stands.
  await db.schema
    .createTable('batch_jobs')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('key_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('account_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('plan', 'varchar(16)', (c) => c.notNull())
    .addColumn('mode', 'varchar(8)', (c) => c.notNull())
    .addColumn('request_id', 'varchar(36)', (c) => c.notNull())
    .addColumn('request_body', 'text', (c) => c.notNull())
    .addColumn('requester_vat_number', 'varchar(256)')
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'varchar(30)', (c) => c.notNull())
    .addColumn('started_at', 'varchar(30)')
    .addColumn('completed_at', 'varchar(30)')
    .execute();
  await db.schema
    .createIndex('batch_jobs_key_idx')
    .on('batch_jobs')
    .columns(['key_id', 'created_at'])
    .execute();

  // One row per input number: the durable work queue (claimed under a lease) and the result store.
  await db.schema
    .createTable('batch_items')
    .addColumn('id', 'varchar(48)', (c) => c.primaryKey())
    .addColumn('job_id', 'varchar(36)', (c) => c.notNull().references('batch_jobs.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('vat_number', 'varchar(256)', (c) => c.notNull())
    .addColumn('country', 'varchar(8)', (c) => c.notNull())
    .addColumn('rank', 'integer', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('ok', 'integer')
    .addColumn('result', 'text')
    .addColumn('source', 'varchar(24)')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'varchar(30)', (c) => c.notNull())
    .addColumn('retry_until', 'varchar(30)')
    .addColumn('last_error', 'text')
    .addColumn('locked_until', 'varchar(30)')
    .addColumn('claimed_by', 'varchar(64)')
    .addColumn('finished_at', 'varchar(30)')
    .execute();
  await db.schema
    .createIndex('batch_items_due_idx')
    .on('batch_items')
    .columns(['status', 'rank', 'id'])
    .execute();
  await db.schema
    .createIndex('batch_items_job_idx')
    .on('batch_items')
    .columns(['job_id', 'status', 'position'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('batch_items').execute();
  await db.schema.dropTable('batch_jobs').execute();
}
