import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database, MonitorChangesTable, MonitorChecksTable, MonitorsTable } from '../../db/schema.js';
import { claimLeased } from '../../jobs/claim.js';

/** Rows per INSERT statement (26 values each: well under SQLite's bound-parameter limit). */
const INSERT_CHUNK = 500;
/** Values per `IN (…)` list. */
const IN_CHUNK = 500;

export interface ListFilter {
  keyId: string;
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
  >
>;

/** All SQL of monitors, their checks and their changes. Every method takes an optional transaction. */
export function createMonitorsRepository(db: Kysely<Database>, dialect: Dialect) {
  const ofKey = (trx: Kysely<Database>, keyId: string, id: string) =>
    trx.selectFrom('monitors').selectAll().where('id', '=', id).where('key_id', '=', keyId);
  /** Locks the rows read until the end of the transaction on PostgreSQL (SQLite has one writer anyway). */
  const lockedOnPostgres = <Q extends { forUpdate(): Q }>(query: Q): Q =>
    dialect === 'postgres' ? query.forUpdate() : query;
  return {
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

    /** A monitor of this key (another key's is not read). */
    async findOfKey(
      keyId: string,
      id: string,
      trx: Kysely<Database> = db,
    ): Promise<MonitorsTable | undefined> {
      return ofKey(trx, keyId, id).executeTakeFirst();
    },

    /** A monitor of this key, locked as `findForUpdate` locks it (another key's is neither read nor locked). */
    async findOfKeyForUpdate(
      keyId: string,
      id: string,
      trx: Kysely<Database>,
    ): Promise<MonitorsTable | undefined> {
      return lockedOnPostgres(ofKey(trx, keyId, id)).executeTakeFirst();
    },

    /** The monitor row, locked until the end of the transaction on PostgreSQL (checks of one monitor queue). */
    async findForUpdate(id: string, trx: Kysely<Database>): Promise<MonitorsTable | undefined> {
      return lockedOnPostgres(trx.selectFrom('monitors').selectAll().where('id', '=', id)).executeTakeFirst();
    },

    async findByNumbers(
      keyId: string,
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
            .where('key_id', '=', keyId)
            .where('vat_number', 'in', chunk)
            .execute()),
        );
      }
      return out;
    },

    async countForKey(keyId: string, trx: Kysely<Database> = db): Promise<number> {
      const row = await trx
        .selectFrom('monitors')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('key_id', '=', keyId)
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    async list(filter: ListFilter, trx: Kysely<Database> = db): Promise<MonitorsTable[]> {
      let query = trx.selectFrom('monitors').selectAll().where('key_id', '=', filter.keyId);
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
    async remove(id: string, keyId: string, trx: Kysely<Database> = db): Promise<boolean> {
      const result = await trx
        .deleteFrom('monitors')
        .where('id', '=', id)
        .where('key_id', '=', keyId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
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
      keyId: string,
      limit: number,
      since: string | null,
      trx: Kysely<Database> = db,
    ): Promise<Array<MonitorChangesTable & { vat_number: string; reference: string | null }>> {
      let query = trx
        .selectFrom('monitor_changes')
        .innerJoin('monitors', 'monitors.id', 'monitor_changes.monitor_id')
        .selectAll('monitor_changes')
        .select(['monitors.vat_number', 'monitors.reference'])
        .where('monitor_changes.key_id', '=', keyId);
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

    /** Whether the API key exists and is not revoked. */
    async keyActive(keyId: string, trx: Kysely<Database> = db): Promise<boolean> {
      const row = await trx
        .selectFrom('api_keys')
        .select('revoked_at')
        .where('id', '=', keyId)
        .executeTakeFirst();
      return row !== undefined && row.revoked_at === null;
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
      keyId: string,
      trx: Kysely<Database> = db,
    ): Promise<Array<{ status: string; stale: number; n: number }>> {
      const rows = await trx
        .selectFrom('monitors')
        .select(['status', 'stale', sql<number | string>`count(*)`.as('n')])
        .where('key_id', '=', keyId)
        .groupBy(['status', 'stale'])
        .execute();
      return rows.map((r) => ({ status: r.status, stale: Number(r.stale), n: Number(r.n) }));
    },
  };
}

export type MonitorsRepository = ReturnType<typeof createMonitorsRepository>;
