import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A monitor created with `"peppol": true` also checks Peppol reachability: `peppol` is 1 then;
  // `peppol_state` is its last known Peppol answer (`{"reachable", "can_receive_invoices"}` as JSON),
  // null until a Peppol check answered; `peppol_checked_at` when that was.
  await db.schema
    .alterTable('monitors')
    .addColumn('peppol', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('monitors').addColumn('peppol_state', 'varchar(200)').execute();
  await db.schema.alterTable('monitors').addColumn('peppol_checked_at', 'varchar(30)').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('monitors').dropColumn('peppol_checked_at').execute();
  await db.schema.alterTable('monitors').dropColumn('peppol_state').execute();
  await db.schema.alterTable('monitors').dropColumn('peppol').execute();
}
