import { type Kysely, PostgresAdapter } from 'kysely';

/**
 * The national registers' names (`pl_whitelist`, `sk_financnasprava`, …) are longer than the four
 * registries' (`vies`, `hmrc`): a monitor check's and a monitor's `source`, and a batch item's
 * `source:source_status` (`sk_financnasprava:fallback`), are widened on PostgreSQL, where a longer
 * value failed the insert. SQLite ignores declared lengths, so nothing changes there. Widening keeps
 * every stored value.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await db.schema
    .alterTable('monitor_checks')
    .alterColumn('source', (c) => c.setDataType('varchar(32)'))
    .execute();
  await db.schema
    .alterTable('monitors')
    .alterColumn('source', (c) => c.setDataType('varchar(32)'))
    .execute();
  await db.schema
    .alterTable('batch_items')
    .alterColumn('source', (c) => c.setDataType('varchar(48)'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await db.schema
    .alterTable('monitor_checks')
    .alterColumn('source', (c) => c.setDataType('varchar(8)'))
    .execute();
  await db.schema
    .alterTable('monitors')
    .alterColumn('source', (c) => c.setDataType('varchar(8)'))
    .execute();
  await db.schema
    .alterTable('batch_items')
    .alterColumn('source', (c) => c.setDataType('varchar(24)'))
    .execute();
}
