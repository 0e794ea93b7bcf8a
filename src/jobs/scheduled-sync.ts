import type { Kysely } from 'kysely';
import type { Dialect } from '../db/database.js';
import type { ScheduledSyncsTable } from '../db/schema.js';
import { claimLeased } from './claim.js';

/**
 * The tables of scheduled runs (the syncs and the evidence time-stamping): one row per run, all of
 * the same columns (`ScheduledSyncsTable`).
 */
export type ScheduledSyncTableName = 'rate_syncs' | 'national_file_syncs' | 'evidence_timestamp_runs';

type ScheduledSyncsDatabase = Record<ScheduledSyncTableName, ScheduledSyncsTable>;

/**
 * A table of scheduled syncs, each run claimed under a lease (the workers' lease: `FOR UPDATE SKIP
 * LOCKED` on PostgreSQL, the single writer on SQLite) so that one instance at a time runs a sync.
 */
export function createScheduledSyncs<DB>(
  database: Kysely<DB>,
  dialect: Dialect,
  table: ScheduledSyncTableName,
) {
  const db = database as unknown as Kysely<ScheduledSyncsDatabase>;

  /**
   * Claims the named sync when it is due (or `evenIfNotDue`) and no other instance holds it;
   * creates its row, due at once, the first time. `null`: not due, or another instance holds it.
   */
  async function claim(
    id: string,
    workerId: string,
    now: string,
    leaseUntil: string,
    options: { evenIfNotDue?: boolean } = {},
  ): Promise<ScheduledSyncsTable | null> {
    await db
      .insertInto(table)
      .values({
        id,
        locked_until: null,
        claimed_by: null,
        next_run_at: now,
        last_run_at: null,
        last_success_at: null,
        last_error: null,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    const rows = await claimLeased<ScheduledSyncsTable, ScheduledSyncsDatabase>(db, dialect, {
      table,
      due: (eb) =>
        options.evenIfNotDue ? eb('id', '=', id) : eb.and([eb('id', '=', id), eb('next_run_at', '<=', now)]),
      orderBy: ['next_run_at'],
      now,
      leaseUntil,
      workerId,
      limit: 1,
    });
    return rows[0] ?? null;
  }

  /** Ends a claimed run: when the next one is due, and how this one ended. */
  async function finish(
    id: string,
    workerId: string,
    result: { at: string; nextRunAt: string; error: string | null },
  ): Promise<void> {
    await db
      .updateTable(table)
      .set({
        locked_until: null,
        claimed_by: null,
        next_run_at: result.nextRunAt,
        last_run_at: result.at,
        last_error: result.error,
        ...(result.error === null ? { last_success_at: result.at } : {}),
      })
      .where('id', '=', id)
      .where('claimed_by', '=', workerId)
      .execute();
  }

  /** The named sync's row, if it ever was claimed. */
  async function get(id: string): Promise<ScheduledSyncsTable | undefined> {
    return db.selectFrom(table).selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Every sync of the table, by id. */
  async function list(): Promise<ScheduledSyncsTable[]> {
    return db.selectFrom(table).selectAll().orderBy('id').execute();
  }

  return { claim, finish, get, list };
}

export type ScheduledSyncs = ReturnType<typeof createScheduledSyncs>;
