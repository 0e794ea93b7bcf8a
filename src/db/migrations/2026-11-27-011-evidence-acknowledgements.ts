import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // An operator's acknowledgement of a chain head the server could not verify (`openvat evidence
  // acknowledge`), signed with OPENVAT_EVIDENCE_KEY: confirmations resume from that head.
  await db.schema
    .createTable('evidence_acknowledgements')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('acknowledged_at', 'varchar(30)', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('report', 'text', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('evidence_acknowledgements_time_idx')
    .on('evidence_acknowledgements')
    .column('acknowledged_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('evidence_acknowledgements').execute();
}
