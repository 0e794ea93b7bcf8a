import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // RFC 3161 time-stamp tokens over signed heads of the evidence chain (docs/evidence.md). The
  // token (CMS SignedData DER, base64) covers SHA-256 of headMessage(head_seq, head_hash).
  await db.schema
    .createTable('evidence_timestamps')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('head_seq', 'integer', (c) => c.notNull())
    .addColumn('head_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('gen_time', 'varchar(30)', (c) => c.notNull())
    .addColumn('tsa_url', 'text', (c) => c.notNull())
    .addColumn('serial', 'varchar(128)', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    // The certificates the token carries (the TSA's chain), PEM, signer first.
    .addColumn('chain', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(30)', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('evidence_timestamps_head_idx')
    .on('evidence_timestamps')
    .columns(['head_seq', 'gen_time'])
    .execute();
  await db.schema
    .createIndex('evidence_timestamps_time_idx')
    .on('evidence_timestamps')
    .column('gen_time')
    .execute();
  // The time-stamping run, claimed under a lease so that one instance at a time asks an authority.
  await db.schema
    .createTable('evidence_timestamp_runs')
    .addColumn('id', 'varchar(32)', (c) => c.primaryKey())
    .addColumn('locked_until', 'varchar(30)')
    .addColumn('claimed_by', 'varchar(64)')
    .addColumn('next_run_at', 'varchar(30)', (c) => c.notNull())
    .addColumn('last_run_at', 'varchar(30)')
    .addColumn('last_error', 'text')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('evidence_timestamp_runs').execute();
  await db.schema.dropTable('evidence_timestamps').execute();
}
