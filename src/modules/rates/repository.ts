import type { Kysely, Transaction } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type {
  Database,
  RateChangesTable,
  RateEventChecksTable,
  RateEventsTable,
  RateSyncsTable,
} from '../../db/schema.js';
import { createScheduledSyncs } from '../../jobs/scheduled-sync.js';

export type RateChangeRow = RateChangesTable;
export type RateSyncRow = RateSyncsTable;
export type RateEventRow = RateEventsTable;

/** Learnt rate changes and the sync's schedule. */
export function createRatesRepository(db: Kysely<Database>, dialect: Dialect) {
  const syncs = createScheduledSyncs(db, dialect, 'rate_syncs');
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

    /** The rates sync's lease and schedule (`rate_syncs`): one instance at a time runs it. */
    claimSync: syncs.claim,
    finishSync: syncs.finish,

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

    sync: syncs.get,
  };
}

export type RatesRepository = ReturnType<typeof createRatesRepository>;
