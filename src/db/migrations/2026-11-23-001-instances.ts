import type { Kysely } from 'kysely';

/**
 * One row per running instance, refreshed by its heartbeat: how many instances share the database
 * (the per-instance share of registry limits when Redis fails, the warning when Redis is absent).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('instances')
    .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
    .addColumn('started_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('seen_at', 'varchar(32)', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('instances').execute();
}
