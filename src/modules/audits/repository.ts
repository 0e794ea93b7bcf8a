import type { Kysely } from 'kysely';
import type { AuditsTable, Database } from '../../db/schema.js';

export function createAuditsRepository(db: Kysely<Database>) {
  return {
    async insert(record: AuditsTable, trx: Kysely<Database> = db) {
      await trx.insertInto('audits').values(record).execute();
    },

    async find(requestId: string, trx: Kysely<Database> = db): Promise<AuditsTable | undefined> {
      return trx.selectFrom('audits').selectAll().where('request_id', '=', requestId).executeTakeFirst();
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
