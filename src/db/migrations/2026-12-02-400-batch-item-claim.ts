import type { Kysely } from 'kysely';

/**
 * A batch item may carry what the customer claims about the company (`company_name`, …, the item
 * given as an object): `claim` holds it as JSON (`{"name": …, "city": …}`), null for a plain number.
 * An older version ignores the column (its items are then validated without the identity match).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('batch_items').addColumn('claim', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('batch_items').dropColumn('claim').execute();
}
