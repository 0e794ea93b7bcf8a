import type { Kysely, Transaction } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type {
  Database,
  RateChangesTable,
  RateEventChecksTable,
  RateEventsTable,
  RateSyncsTable,
} from '../../db/schema.js';
import { claimLeased } from '../../jobs/claim.js';

export type RateChangeRow = RateChangesTable;
export type RateSyncRow = RateSyncsTable;
export type RateEventRow = RateEventsTable;

/** Learnt rate changes and the sync's schedule. */
export function createRatesRepository(db: Kysely<Database>, dialect: Dialect) {
  return {
    /** Every change of the given statuses, oldest day first (then oldest learnt). */
    async changes(statuses: readonly string[]): Promise<RateChangeRow[]> {
      if (statuses.length === 0) return [];
      return db
        .selectFrom('rate_changes')
        .selectAll()
        .where('status', 'in', statuses)
        .orderBy('country_code')
        .orderBy('valid_from')
        .orderBy('learnt_at')
        .orderBy('id')
        .execute();
    },

    async change(id: string): Promise<RateChangeRow | undefined> {
      return db.selectFrom('rate_changes').selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** A country's changes from a day on, whatever their status. */
    async changesFrom(country: string, day: string): Promise<RateChangeRow[]> {
      return db
        .selectFrom('rate_changes')
        .selectAll()
        .where('country_code', '=', country)
        .where('valid_from', '>=', day)
        .orderBy('valid_from')
        .execute();
    },

    /**
     * Records what one sync learnt and retires what it replaces, in one transaction. An operator's
     * decision is never retired: only changes no operator decided on are (`decided_at` null), so a
     * release keeps its `decided_at` and `decided_by` whatever a sync finds later.
     */
    async record(
      inserts: readonly RateChangeRow[],
      retire: readonly { id: string; status: 'superseded' | 'withdrawn'; at: string }[],
    ): Promise<void> {
      if (inserts.length === 0 && retire.length === 0) return;
      await db.transaction().execute(async (trx) => {
        for (const r of retire) {
          await trx
            .updateTable('rate_changes')
            .set({ status: r.status, decided_at: r.at, decided_by: 'sync' })
            .where('id', '=', r.id)
            .where('status', 'in', ['applied', 'held'])
            .where('decided_at', 'is', null)
            .execute();
        }
        if (inserts.length > 0)
          await trx
            .insertInto('rate_changes')
            .values([...inserts])
            .execute();
      });
    },

    /**
     * An operator's decision on a held change, and `recorded` (the audit log's entry) in the same
     * transaction; false when it is not held (any more), and then nothing is recorded.
     */
    async decide(
      id: string,
      decision: { status: 'applied' | 'rejected'; at: string; by: string },
      recorded: (trx: Transaction<Database>, row: RateChangeRow) => Promise<void>,
    ): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const result = await trx
          .updateTable('rate_changes')
          .set({ status: decision.status, decided_at: decision.at, decided_by: decision.by })
          .where('id', '=', id)
          .where('status', '=', 'held')
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return false;
        const row = await trx
          .selectFrom('rate_changes')
          .selectAll()
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        await recorded(trx, row);
        return true;
      });
    },

    /**
     * Claims the named sync when it is due and no other instance holds it (the workers' lease:
     * `FOR UPDATE SKIP LOCKED` on PostgreSQL); creates its row, due at once, the first time.
     */
    async claimSync(
      id: string,
      workerId: string,
      now: string,
      leaseUntil: string,
      options: { evenIfNotDue?: boolean } = {},
    ): Promise<RateSyncRow | null> {
      await db
        .insertInto('rate_syncs')
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
      const rows = await claimLeased<RateSyncRow, Database>(db, dialect, {
        table: 'rate_syncs',
        due: (eb) =>
          options.evenIfNotDue
            ? eb('id', '=', id)
            : eb.and([eb('id', '=', id), eb('next_run_at', '<=', now)]),
        orderBy: ['next_run_at'],
        now,
        leaseUntil,
        workerId,
        limit: 1,
      });
      return rows[0] ?? null;
    },

    /** Ends a claimed run: when the next one is due, and how this one ended. */
    async finishSync(
      id: string,
      workerId: string,
      result: { at: string; nextRunAt: string; error: string | null },
    ): Promise<void> {
      await db
        .updateTable('rate_syncs')
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
    },

    /**
     * How far the starts of periods have been looked for; the first call ever (on any instance)
     * starts the watch at `now`.
     */
    async eventCheck(id: string, now: string): Promise<RateEventChecksTable> {
      await db
        .insertInto('rate_event_checks')
        .values({ id, since: now, checked_at: now })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      return db.selectFrom('rate_event_checks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    },

    /** Moves the watch forward to `to` (never back: another instance may have looked further). */
    async advanceEventCheck(id: string, to: string): Promise<void> {
      await db
        .updateTable('rate_event_checks')
        .set({ checked_at: to })
        .where('id', '=', id)
        .where('checked_at', '<', to)
        .execute();
    },

    /**
     * Stores a `rates.changed` event unless the same change (country, first day, kind, rates) is
     * stored already, by this instance or another; true when this call stored it.
     */
    async insertEvent(row: RateEventRow, trx: Kysely<Database> = db): Promise<boolean> {
      const result = await trx
        .insertInto('rate_events')
        .values(row)
        .onConflict((oc) => oc.columns(['country_code', 'effective_from', 'kind', 'rates']).doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
    },

    async events(): Promise<RateEventRow[]> {
      return db.selectFrom('rate_events').selectAll().orderBy('created_at').orderBy('id').execute();
    },

    async sync(id: string): Promise<RateSyncRow | undefined> {
      return db.selectFrom('rate_syncs').selectAll().where('id', '=', id).executeTakeFirst();
    },
  };
}

export type RatesRepository = ReturnType<typeof createRatesRepository>;
