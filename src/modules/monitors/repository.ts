import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database, MonitorChangesTable, MonitorChecksTable, MonitorsTable } from '../../db/schema.js';
import { claimLeased } from '../../jobs/claim.js';

/** Rows per INSERT statement (27 values each: well under SQLite's bound-parameter limit). */
const INSERT_CHUNK = 500;
/** Values per `IN (…)` list. */
const IN_CHUNK = 500;

/**
 * Whose monitors a query reads: a key's, and when `createdAfter` is set only those created after
 * it (the playground's demo key keeps its monitors 24 hours).
 */
export interface Owner {
  keyId: string;
  createdAfter: string | null;
}

export interface ListFilter {
  owner: Owner;
  status?: string;
  changedSince?: string;
  stale?: boolean;
  /** Monitors after this id (the cursor), in id order. */
  after?: string;
  limit: number;
}

/** Columns a check writes to its monitor. */
export type MonitorUpdate = Partial<
  Pick<
    MonitorsTable,
    | 'status'
    | 'name'
    | 'address'
    | 'source'
    | 'stale'
    | 'checks'
    | 'failures'
    | 'last_checked_at'
    | 'last_attempt_at'
    | 'failing_since'
    | 'last_error'
    | 'last_change_at'
    | 'next_check_at'
    | 'locked_until'
    | 'claimed_by'
    | 'interval'
    | 'reference'
    | 'metadata'
    | 'peppol'
    | 'peppol_state'
    | 'peppol_checked_at'
  >
>;

/** All SQL of monitors, their checks and their changes. Every method takes an optional transaction. */
export function createMonitorsRepository(db: Kysely<Database>, dialect: Dialect) {
  const ofKey = (trx: Kysely<Database>, owner: Owner, id: string) =>
    trx
      .selectFrom('monitors')
      .selectAll()
      .where('id', '=', id)
      .where('key_id', '=', owner.keyId)
      .$if(owner.createdAfter !== null, (q) => q.where('created_at', '>', owner.createdAfter as string));
  /** Locks the rows read until the end of the transaction on PostgreSQL (SQLite has one writer anyway). */
  const lockedOnPostgres = <Q extends { forUpdate(): Q }>(query: Q): Q =>
    dialect === 'postgres' ? query.forUpdate() : query;
  return {
    /**
     * Serialises the creations of one key's monitors until the end of the transaction, so that a
     * count and the inserts it allows see no other creation in between: a transaction-scoped advisory
     * lock on PostgreSQL (every instance and CLI process takes the same one). SQLite needs nothing: its
     * one connection runs one transaction at a time.
     */
    async lockKey(keyId: string, trx: Kysely<Database>): Promise<void> {
      if (dialect !== 'postgres') return;
      await sql`SELECT pg_advisory_xact_lock(hashtext(current_schema()), hashtext(${`monitors ${keyId}`}))`.execute(
        trx,
      );
    },

    /** Inserts monitors; a number the key already monitors is left as it is. */
    async insertMany(rows: MonitorsTable[], trx: Kysely<Database> = db): Promise<void> {
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
        await trx
          .insertInto('monitors')
          .values(rows.slice(i, i + INSERT_CHUNK))
          .onConflict((oc) => oc.columns(['key_id', 'vat_number']).doNothing())
          .execute();
      }
    },

    /** A monitor of this owner (another key's is not read). */
    async findOfKey(
      owner: Owner,
      id: string,
      trx: Kysely<Database> = db,
    ): Promise<MonitorsTable | undefined> {
      return ofKey(trx, owner, id).executeTakeFirst();
    },

    /** A monitor of this key, locked as `findForUpdate` locks it (another key's is neither read nor locked). */
    async findOfKeyForUpdate(
      owner: Owner,
      id: string,
      trx: Kysely<Database>,
    ): Promise<MonitorsTable | undefined> {
      return lockedOnPostgres(ofKey(trx, owner, id)).executeTakeFirst();
    },

    /** The monitor row, locked until the end of the transaction on PostgreSQL (checks of one monitor queue). */
    async findForUpdate(id: string, trx: Kysely<Database>): Promise<MonitorsTable | undefined> {
      return lockedOnPostgres(trx.selectFrom('monitors').selectAll().where('id', '=', id)).executeTakeFirst();
    },

    async findByNumbers(
      owner: Owner,
      vatNumbers: string[],
      trx: Kysely<Database> = db,
    ): Promise<Array<Pick<MonitorsTable, 'id' | 'vat_number' | 'created_at'>>> {
      const out: Array<Pick<MonitorsTable, 'id' | 'vat_number' | 'created_at'>> = [];
      for (let i = 0; i < vatNumbers.length; i += IN_CHUNK) {
        const chunk = vatNumbers.slice(i, i + IN_CHUNK);
        out.push(
          ...(await trx
            .selectFrom('monitors')
            .select(['id', 'vat_number', 'created_at'])
            .where('key_id', '=', owner.keyId)
            .where('vat_number', 'in', chunk)
            .$if(owner.createdAfter !== null, (q) => q.where('created_at', '>', owner.createdAfter as string))
            .execute()),
        );
      }
      return out;
    },

    async countForKey(owner: Owner, trx: Kysely<Database> = db): Promise<number> {
      const row = await trx
        .selectFrom('monitors')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('key_id', '=', owner.keyId)
        .$if(owner.createdAfter !== null, (q) => q.where('created_at', '>', owner.createdAfter as string))
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    /** How many of the owner's monitors this visitor of the demo key created. */
    async countForVisitor(owner: Owner, visitor: string, trx: Kysely<Database> = db): Promise<number> {
      const row = await trx
        .selectFrom('monitors')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('key_id', '=', owner.keyId)
        .where('visitor', '=', visitor)
        .$if(owner.createdAfter !== null, (q) => q.where('created_at', '>', owner.createdAfter as string))
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    async list(filter: ListFilter, trx: Kysely<Database> = db): Promise<MonitorsTable[]> {
      const { owner } = filter;
      let query = trx.selectFrom('monitors').selectAll().where('key_id', '=', owner.keyId);
      if (owner.createdAfter !== null) query = query.where('created_at', '>', owner.createdAfter);
      if (filter.status) query = query.where('status', '=', filter.status);
      if (filter.changedSince) query = query.where('last_change_at', '>=', filter.changedSince);
      if (filter.stale !== undefined) query = query.where('stale', '=', filter.stale ? 1 : 0);
      if (filter.after) query = query.where('id', '>', filter.after);
      return query.orderBy('id').limit(filter.limit).execute();
    },

    /**
     * Deletes a monitor of the key, with its checks and changes; false, and nothing touched, when the
     * key has no monitor of that id. Only the key's own monitor row is deleted here: its checks and
     * changes go with it (ON DELETE CASCADE; SQLite runs with foreign keys on).
     */
    async remove(id: string, owner: Owner, trx: Kysely<Database> = db): Promise<boolean> {
      const result = await trx
        .deleteFrom('monitors')
        .where('id', '=', id)
        .where('key_id', '=', owner.keyId)
        .$if(owner.createdAfter !== null, (q) => q.where('created_at', '>', owner.createdAfter as string))
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /**
     * Deletes the key's monitors of these numbers created at or before `by` (with their checks and
     * changes), so that they can be created again; returns how many.
     */
    async removeCreatedBy(
      keyId: string,
      by: string,
      vatNumbers: string[],
      trx: Kysely<Database> = db,
    ): Promise<number> {
      let deleted = 0;
      for (let i = 0; i < vatNumbers.length; i += IN_CHUNK) {
        const result = await trx
          .deleteFrom('monitors')
          .where('key_id', '=', keyId)
          .where('vat_number', 'in', vatNumbers.slice(i, i + IN_CHUNK))
          .where('created_at', '<=', by)
          .executeTakeFirst();
        deleted += Number(result.numDeletedRows);
      }
      return deleted;
    },

    /** Deletes up to `limit` monitors of the key created at or before `by`, with their history; returns how many. */
    async deleteCreatedBy(
      keyId: string,
      by: string,
      limit: number,
      trx: Kysely<Database> = db,
    ): Promise<number> {
      const result = await trx
        .deleteFrom('monitors')
        .where(
          'id',
          'in',
          trx
            .selectFrom('monitors')
            .select('id')
            .where('key_id', '=', keyId)
            .where('created_at', '<=', by)
            .limit(limit),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async checks(
      monitorId: string,
      limit: number,
      trx: Kysely<Database> = db,
    ): Promise<MonitorChecksTable[]> {
      return trx
        .selectFrom('monitor_checks')
        .selectAll()
        .where('monitor_id', '=', monitorId)
        .orderBy('checked_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
    },

    async changes(
      monitorId: string,
      limit: number,
      trx: Kysely<Database> = db,
    ): Promise<MonitorChangesTable[]> {
      return trx
        .selectFrom('monitor_changes')
        .selectAll()
        .where('monitor_id', '=', monitorId)
        .orderBy('detected_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
    },

    /** The latest changes of a key's monitors (since a time), newest first, with the number they concern. */
    async recentChanges(
      owner: Owner,
      limit: number,
      since: string | null,
      trx: Kysely<Database> = db,
    ): Promise<Array<MonitorChangesTable & { vat_number: string; reference: string | null }>> {
      let query = trx
        .selectFrom('monitor_changes')
        .innerJoin('monitors', 'monitors.id', 'monitor_changes.monitor_id')
        .selectAll('monitor_changes')
        .select(['monitors.vat_number', 'monitors.reference'])
        .where('monitor_changes.key_id', '=', owner.keyId);
      if (owner.createdAfter !== null) query = query.where('monitors.created_at', '>', owner.createdAfter);
      if (since) query = query.where('monitor_changes.detected_at', '>=', since);
      return query
        .orderBy('monitor_changes.detected_at', 'desc')
        .orderBy('monitor_changes.id', 'desc')
        .limit(limit)
        .execute();
    },

    /**
     * Claims up to `limit` due monitors under a lease, earliest `next_check_at` first, at most
     * `capacity(country)` per prefix; `skipCountries` are left alone. `FOR UPDATE SKIP LOCKED` on
     * PostgreSQL (see `claimLeased`), so instances take disjoint monitors.
     */
    async claimDue(
      input: {
        now: string;
        leaseUntil: string;
        workerId: string;
        limit: number;
        skipCountries: string[];
        capacity(country: string): number;
      },
      trx: Kysely<Database> = db,
    ): Promise<MonitorsTable[]> {
      return claimLeased<MonitorsTable, Database>(trx, dialect, {
        table: 'monitors',
        due: (eb) =>
          eb.and([
            eb('next_check_at', '<=', input.now),
            ...(input.skipCountries.length > 0 ? [eb('country', 'not in', input.skipCountries)] : []),
          ]),
        orderBy: ['next_check_at', 'id'],
        limit: input.limit,
        now: input.now,
        leaseUntil: input.leaseUntil,
        workerId: input.workerId,
        perGroup: { column: 'country', capacity: input.capacity, window: input.limit * 4 },
      });
    },

    /** Gives claimed monitors back untouched (their prefix is full, or the instance is stopping). */
    async release(ids: string[], workerId: string, trx: Kysely<Database> = db): Promise<void> {
      if (ids.length === 0) return;
      await trx
        .updateTable('monitors')
        .set({ locked_until: null, claimed_by: null })
        .where('id', 'in', ids)
        .where('claimed_by', '=', workerId)
        .execute();
    },

    async update(id: string, update: MonitorUpdate, trx: Kysely<Database> = db): Promise<void> {
      await trx.updateTable('monitors').set(update).where('id', '=', id).execute();
    },

    async insertCheck(check: MonitorChecksTable, trx: Kysely<Database> = db): Promise<void> {
      await trx.insertInto('monitor_checks').values(check).execute();
    },

    async insertChanges(changes: MonitorChangesTable[], trx: Kysely<Database> = db): Promise<void> {
      if (changes.length === 0) return;
      await trx.insertInto('monitor_changes').values(changes).execute();
    },

    /** Deletes up to `limit` checks made before `before`; returns how many. */
    async deleteChecksBefore(before: string, limit: number, trx: Kysely<Database> = db): Promise<number> {
      const result = await trx
        .deleteFrom('monitor_checks')
        .where(
          'id',
          'in',
          trx.selectFrom('monitor_checks').select('id').where('checked_at', '<', before).limit(limit),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /** Monitors per status and stale flag of a key (the dashboard's summary). */
    async summary(
      owner: Owner,
      trx: Kysely<Database> = db,
    ): Promise<Array<{ status: string; stale: number; n: number }>> {
      const rows = await trx
        .selectFrom('monitors')
        .select(['status', 'stale', sql<number | string>`count(*)`.as('n')])
        .where('key_id', '=', owner.keyId)
        .$if(owner.createdAfter !== null, (q) => q.where('created_at', '>', owner.createdAfter as string))
        .groupBy(['status', 'stale'])
        .execute();
      return rows.map((r) => ({ status: r.status, stale: Number(r.stale), n: Number(r.n) }));
    },
  };
}

export type MonitorsRepository = ReturnType<typeof createMonitorsRepository>;
