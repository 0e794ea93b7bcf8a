import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { BatchItemsTable, Database } from '../../db/schema.js';

/** Above every item's rank (a job has at most 10,000 items). */
const MAX_RANK = 2_147_483_647;

/**
 * Claims up to `limit` due items under a lease, taking turns by key, then by job within a key,
 * then by country within a job: each key with due items gets its next item before any key gets
 * a second one, however many jobs it has queued; a key's jobs take turns the same way (lowest
 * `rank` first, so each job's countries go side by side). `skipCountries` are left alone (their
 * share of work in flight is full), and at most `capacity(country)` items of a country are
 * taken, in turn order, among the first `limit × 2` candidates (at most `limit` of one job).
 *
 * The turns are one statement: it walks the unfinished jobs (`batch_jobs_unfinished_idx`), reads
 * each one's first due items in claim order (`batch_items_claim_idx`; a `LATERAL` subquery on
 * PostgreSQL, on SQLite a bound at the job's window-th due item with the jobs as the outer
 * loop), numbers each key's candidates in rank order and orders them by that turn. The cost
 * grows with the number of unfinished jobs (bounded per key by the plan), not with their length.
 * On PostgreSQL the claims of every instance take one transaction-scoped advisory lock first,
 * so each sees the leases the previous one committed; on SQLite the single writer serialises
 * them. Only items still pending with a free lease are leased.
 */
export async function claimDueItems(
  dialect: Dialect,
  input: {
    now: string;
    leaseUntil: string;
    workerId: string;
    limit: number;
    skipCountries: string[];
    /** How many more items of a country this worker takes now. */
    capacity(country: string): number;
  },
  trx: Kysely<Database>,
): Promise<BatchItemsTable[]> {
  if (input.limit <= 0) return [];
  const { now } = input;
  // A job gives at most `limit` candidates (no more of its items can be taken), the claim looks
  // at twice that many, so that it can pass over items of countries at their capacity.
  const perJob = input.limit;
  const window = input.limit * 2;
  const skip = (column: RawBuilder<unknown>) =>
    input.skipCountries.length > 0 ? sql`AND ${column} NOT IN (${sql.join(input.skipCountries)})` : sql``;
  const due = (t: string) =>
    sql`${sql.ref(`${t}.status`)} = 'pending' AND ${sql.ref(`${t}.next_attempt_at`)} <= ${now}
      AND (${sql.ref(`${t}.locked_until`)} IS NULL OR ${sql.ref(`${t}.locked_until`)} <= ${now})
      ${skip(sql.ref(`${t}.country`))}`;
  const candidates =
    dialect === 'postgres'
      ? sql<{ id: string; country: string }>`
          SELECT c.id, c.country FROM (
            SELECT i.id, i.country, i.rank,
              ROW_NUMBER() OVER (PARTITION BY j.key_id ORDER BY i.rank, i.id) AS turn
            FROM batch_jobs j CROSS JOIN LATERAL (
              SELECT i.id, i.country, i.rank FROM batch_items i
              WHERE i.job_id = j.id AND ${due('i')}
              ORDER BY i.rank, i.id LIMIT ${perJob}
            ) i
            WHERE j.status IN ('queued', 'running')
          ) c
          ORDER BY c.turn, c.rank, c.id LIMIT ${window}`
      : sql<{ id: string; country: string }>`
          SELECT c.id, c.country FROM (
            SELECT i.id, i.country, i.rank,
              ROW_NUMBER() OVER (PARTITION BY j.key_id ORDER BY i.rank, i.id) AS turn
            FROM batch_jobs j CROSS JOIN batch_items i
            WHERE j.status IN ('queued', 'running') AND i.job_id = j.id AND ${due('i')}
              AND i.rank <= COALESCE((
                SELECT x.rank FROM batch_items x WHERE x.job_id = j.id AND ${due('x')}
                ORDER BY x.rank, x.id LIMIT 1 OFFSET ${perJob - 1}
              ), ${MAX_RANK})
          ) c
          ORDER BY c.turn, c.rank, c.id LIMIT ${window}`;
  const claim = async (conn: Kysely<Database>) => {
    if (dialect === 'postgres') {
      await sql`SELECT pg_advisory_xact_lock(hashtext(current_schema()), hashtext('batch_items claim'))`.execute(
        conn,
      );
    }
    const { rows } = await candidates.execute(conn);
    const taken = new Map<string, number>();
    const ids: string[] = [];
    for (const row of rows) {
      const n = taken.get(row.country) ?? 0;
      if (n >= input.capacity(row.country)) continue;
      taken.set(row.country, n + 1);
      ids.push(row.id);
      if (ids.length >= input.limit) break;
    }
    if (ids.length === 0) return [];
    return conn
      .updateTable('batch_items')
      .set({ locked_until: input.leaseUntil, claimed_by: input.workerId })
      .where('id', 'in', ids)
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .returningAll()
      .execute();
  };
  return trx.isTransaction ? claim(trx) : trx.transaction().execute(claim);
}
