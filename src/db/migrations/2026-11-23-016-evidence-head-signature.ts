import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The Ed25519 signature of the chain head (seq, hash) with OPENVAT_EVIDENCE_KEY, written with
  // every append; null while no key is configured.
  await db.schema.alterTable('confirmation_chain_head').addColumn('signature', 'varchar(128)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('confirmation_chain_head').dropColumn('signature').execute();
}
