import { type Kysely, PostgresAdapter } from 'kysely';

/**
 * What the tax authority returns is stored whatever its length: its request id (`upstream_id`)
 * and its status (`taxauth_status`) become `text` on PostgreSQL, where a value longer than the
 * column failed the insert after the authority had confirmed. SQLite ignores declared lengths, so
 * nothing changes there. Widening a varchar to text keeps every stored value (and so every hash).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await db.schema
    .alterTable('confirmations')
    .alterColumn('upstream_id', (c) => c.setDataType('text'))
    .alterColumn('taxauth_status', (c) => c.setDataType('text'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await db.schema
    .alterTable('confirmations')
    .alterColumn('upstream_id', (c) => c.setDataType('varchar(128)'))
    .alterColumn('taxauth_status', (c) => c.setDataType('varchar(32)'))
    .execute();
}
