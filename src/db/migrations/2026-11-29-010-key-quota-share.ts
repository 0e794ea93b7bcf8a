import type { Kysely } from 'kysely';

/**
 * A rolled key's successor counts its monthly quota on the same count as the key it replaces:
 * `quota_key_id` names the key whose `key_month_calls` it uses (the first key of its roll chain);
 * null = its own. An older version ignores the column (its successor keys then count on their own).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('quota_key_id', 'varchar(36)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('quota_key_id').execute();
}
