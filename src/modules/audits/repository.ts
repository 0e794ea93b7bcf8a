import type { Kysely } from 'kysely';
import { compiledInsert } from '../../db/compiled-insert.js';
import type { AuditsTable, Database } from '../../db/schema.js';

const COLUMNS = [
  'request_id',
  'key_id',
  'endpoint',
  'response',
  'request_body',
  'created_at',
  'expires_at',
  'latency_ms',
  'status_code',
  'valid',
] as const satisfies ReadonlyArray<keyof AuditsTable>;

export function createAuditsRepository(db: Kysely<Database>) {
  const insertRows = compiledInsert('audits', COLUMNS);
  return {
    async insert(record: AuditsTable, trx: Kysely<Database> = db) {
      await insertRows([record], trx);
    },

    /** Inserts records with one statement. */
    async insertMany(records: readonly AuditsTable[], trx: Kysely<Database> = db) {
      await insertRows(records, trx);
    },

    /** The record of this request id if this key made the call (another key's is not read). */
    async findOfKey(
      keyId: string,
      requestId: string,
      trx: Kysely<Database> = db,
    ): Promise<AuditsTable | undefined> {
      return trx
        .selectFrom('audits')
        .selectAll()
        .where('request_id', '=', requestId)
        .where('key_id', '=', keyId)
        .executeTakeFirst();
    },

    /** Marks a record whose answer could not be written to its client. */
    async markUndelivered(requestId: string, at: string, trx: Kysely<Database> = db): Promise<void> {
      await trx
        .updateTable('audits')
        .set({ undelivered_at: at })
        .where('request_id', '=', requestId)
        .where('undelivered_at', 'is', null)
        .execute();
    },

    /** Deletes up to `limit` records that expired before `now`; returns how many. */
    async deleteExpired(now: string, limit: number, trx: Kysely<Database> = db): Promise<number> {
      const batch = trx
        .selectFrom('audits')
        .select('request_id')
        .where('expires_at', '<=', now)
        .orderBy('expires_at')
        .limit(limit);
      const result = await trx.deleteFrom('audits').where('request_id', 'in', batch).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async count(trx: Kysely<Database> = db): Promise<number> {
      const row = await trx
        .selectFrom('audits')
        .select((eb) => eb.fn.countAll<string | number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}

export type AuditsRepository = ReturnType<typeof createAuditsRepository>;
