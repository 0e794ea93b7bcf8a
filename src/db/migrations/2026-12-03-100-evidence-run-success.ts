import type { Kysely } from 'kysely';

/** The columns of the time-stamping run this migration reads and writes. */
interface RunsDatabase {
  evidence_timestamp_runs: {
    last_run_at: string | null;
    last_error: string | null;
    last_success_at: string | null;
  };
}

/**
 * The time-stamping run is claimed like the scheduled syncs (`createScheduledSyncs`), whose rows
 * keep when the last run succeeded: `evidence_timestamp_runs` gets `last_success_at`. A run row
 * whose last run ended without an error carries that run's time over; one whose last run failed
 * starts without (when an earlier run succeeded was not kept). An older version ignores the column.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('evidence_timestamp_runs').addColumn('last_success_at', 'varchar(30)').execute();
  await (db as unknown as Kysely<RunsDatabase>)
    .updateTable('evidence_timestamp_runs')
    .set((eb) => ({ last_success_at: eb.ref('last_run_at') }))
    .where('last_error', 'is', null)
    .where('last_run_at', 'is not', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('evidence_timestamp_runs').dropColumn('last_success_at').execute();
}
