import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The retention purge finds the admin audit log's entries past OPENVAT_ADMIN_AUDIT_RETENTION_DAYS by age.
  await db.schema
    .createIndex('admin_audit_log_created_idx')
    .on('admin_audit_log')
    .columns(['created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('admin_audit_log_created_idx').execute();
}
