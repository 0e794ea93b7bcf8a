import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import type { Dialect } from '../db/database.js';

/** Columns every leased queue table has; the rest are the queue's own. */
export interface LeasedRow {
  id: string;
  locked_until: string | null;
  claimed_by: string | null;
  [column: string]: unknown;
}

/** Any database seen as a set of leased queue tables (the claim only touches the columns above). */
export type QueueDatabase = Record<string, LeasedRow>;

/**
 * A queue table claimable under a lease: it has a string `id`, `locked_until` (ISO time, null when
 * free) and `claimed_by` (the worker holding the lease).
 */
export interface ClaimSpec {
  table: string;
  /** What makes a row due, besides a free or expired lease (e.g. status and next attempt time). */
  due: (eb: ExpressionBuilder<QueueDatabase, string>) => Expression<SqlBool>;
  /** Columns the oldest work is taken by. */
  orderBy: readonly string[];
  limit: number;
  /** Now, as an ISO string: leases ending at or before it are expired. */
  now: string;
  /** End of the new lease: a row not released by then is claimed again (the worker died). */
  leaseUntil: string;
  workerId: string;
  /**
   * At most `capacity(value)` rows per value of `column`, chosen in order among the first `window`
   * due rows, so a worker does not claim rows it would only give back.
   */
  perGroup?: { column: string; capacity(value: string): number; window: number };
}

/**
 * Claims up to `limit` due rows in one atomic statement and returns them:
 * `UPDATE t SET locked_until, claimed_by WHERE id IN (SELECT id … LIMIT n) RETURNING *`.
 * On PostgreSQL the inner select takes `FOR UPDATE SKIP LOCKED`, so concurrent workers on several
 * instances take disjoint rows without waiting on each other; on SQLite the single writer makes the
 * statement atomic. A crashed worker's rows become claimable again once their lease expires, so
 * every row is processed at least once.
 */
export async function claimLeased<Row, DB>(
  database: Kysely<DB>,
  dialect: Dialect,
  spec: ClaimSpec,
): Promise<Row[]> {
  const db = database as unknown as Kysely<QueueDatabase>;
  if (spec.limit <= 0) return [];
  if (spec.perGroup) {
    const perGroup = spec.perGroup;
    const claim = (trx: Kysely<QueueDatabase>) => claimByGroup<Row>(trx, dialect, spec, perGroup);
    return db.isTransaction ? claim(db) : db.transaction().execute(claim);
  }
  const rows = await db
    .updateTable(spec.table)
    .set({ locked_until: spec.leaseUntil, claimed_by: spec.workerId })
    .where('id', 'in', dueRows(db, dialect, spec, spec.limit).select('id'))
    .returningAll()
    .execute();
  return rows as Row[];
}

/** A lease that is free or has expired by `now`. */
function leaseFree(eb: ExpressionBuilder<QueueDatabase, string>, now: string) {
  return eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]);
}

/** The first `limit` due rows with a free lease, in claim order; locked, skipping locked rows, on PostgreSQL. */
function dueRows(db: Kysely<QueueDatabase>, dialect: Dialect, spec: ClaimSpec, limit: number) {
  let due = db
    .selectFrom(spec.table)
    .where(spec.due)
    .where((eb) => leaseFree(eb, spec.now));
  for (const column of spec.orderBy) due = due.orderBy(column);
  due = due.limit(limit);
  return dialect === 'postgres' ? due.forUpdate().skipLocked() : due;
}

/**
 * The per-group claim: reads the first due rows (locking them on PostgreSQL, skipping rows other
 * workers hold), picks up to each group's capacity, and leases only those, in one transaction. Rows
 * read but not picked are left as they were; their row locks end with the transaction.
 */
async function claimByGroup<Row>(
  db: Kysely<QueueDatabase>,
  dialect: Dialect,
  spec: ClaimSpec,
  perGroup: NonNullable<ClaimSpec['perGroup']>,
): Promise<Row[]> {
  const candidates = (await dueRows(db, dialect, spec, Math.max(spec.limit, perGroup.window))
    .select(['id', perGroup.column])
    .execute()) as Array<Record<string, unknown>>;
  const taken = new Map<string, number>();
  const ids: string[] = [];
  for (const row of candidates) {
    const group = String(row[perGroup.column]);
    const n = taken.get(group) ?? 0;
    if (n >= perGroup.capacity(group)) continue;
    taken.set(group, n + 1);
    ids.push(String(row.id));
    if (ids.length >= spec.limit) break;
  }
  if (ids.length === 0) return [];
  const rows = await db
    .updateTable(spec.table)
    .set({ locked_until: spec.leaseUntil, claimed_by: spec.workerId })
    .where('id', 'in', ids)
    .where((eb) => leaseFree(eb, spec.now))
    .returningAll()
    .execute();
  return rows as Row[];
}
