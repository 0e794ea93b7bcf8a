import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';

export interface UsageCount {
  keyId: string;
  day: string;
  operation: string;
  requests: number;
  errors: number;
}

export function createUsageRepository(db: Kysely<Database>) {
  return {
    /** Adds the counts to the stored ones, in one transaction. */
    async add(counts: readonly UsageCount[]): Promise<void> {
      if (counts.length === 0) return;
      await db.transaction().execute(async (trx) => {
        // One statement per 200 rows keeps every statement under SQLite's bound-parameter limit.
        for (let i = 0; i < counts.length; i += 200) {
          await trx
            .insertInto('usage_daily')
            .values(
              counts.slice(i, i + 200).map((c) => ({
                key_id: c.keyId,
                day: c.day,
                operation: c.operation,
                requests: c.requests,
                errors: c.errors,
              })),
            )
            .onConflict((oc) =>
              oc.columns(['key_id', 'day', 'operation']).doUpdateSet({
                requests: sql`usage_daily.requests + excluded.requests`,
                errors: sql`usage_daily.errors + excluded.errors`,
              }),
            )
            .execute();
        }
      });
    },

    /** A key's counts from `fromDay` to `toDay` (inclusive, `YYYY-MM-DD`). */
    async list(keyId: string, fromDay: string, toDay: string): Promise<UsageCount[]> {
      const rows = await db
        .selectFrom('usage_daily')
        .select(['day', 'operation', 'requests', 'errors'])
        .where('key_id', '=', keyId)
        .where('day', '>=', fromDay)
        .where('day', '<=', toDay)
        .orderBy('day')
        .orderBy('operation')
        .execute();
      return rows.map((r) => ({
        keyId,
        day: r.day,
        operation: r.operation,
        requests: Number(r.requests),
        errors: Number(r.errors),
      }));
    },
  };
}

export type UsageRepository = ReturnType<typeof createUsageRepository>;
