import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';

/**
 * The calls counted against keys' monthly quotas (`key_month_calls`), one row per key and UTC month.
 * The count only moves by conditional statements, so that instances sharing the database never
 * accept more calls than the quota together.
 */
export function createQuotaRepository(db: Kysely<Database>) {
  return {
    /**
     * Counts one call of `keyId` in `month` if fewer than `quota` are counted; the new count, or
     * null when the quota is used up (nothing changed). One statement: the row's lock (PostgreSQL)
     * or the single writer (SQLite) orders concurrent calls.
     */
    async take(keyId: string, month: string, quota: number): Promise<number | null> {
      if (quota < 1) return null;
      const row = await db
        .insertInto('key_month_calls')
        .values({ key_id: keyId, month, calls: 1 })
        .onConflict((oc) =>
          oc
            .columns(['key_id', 'month'])
            .doUpdateSet({ calls: sql`key_month_calls.calls + 1` })
            .where('key_month_calls.calls', '<', quota),
        )
        .returning('calls')
        .executeTakeFirst();
      return row ? Number(row.calls) : null;
    },

    /** Gives back one call counted by `take` (an answer that turned out not to count). */
    async giveBack(keyId: string, month: string): Promise<void> {
      await db
        .updateTable('key_month_calls')
        .set({ calls: sql`calls - 1` })
        .where('key_id', '=', keyId)
        .where('month', '=', month)
        .where('calls', '>', 0)
        .execute();
    },

    /** Calls counted this month (`YYYY-MM`) of each key that has any. */
    async counted(keyIds: readonly string[], month: string): Promise<Map<string, number>> {
      if (keyIds.length === 0) return new Map();
      const rows = await db
        .selectFrom('key_month_calls')
        .select(['key_id', 'calls'])
        .where('month', '=', month)
        .where('key_id', 'in', [...keyIds])
        .execute();
      return new Map(rows.map((r) => [r.key_id, Number(r.calls)]));
    },
  };
}

export type QuotaRepository = ReturnType<typeof createQuotaRepository>;
