import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** The heartbeat rows of running instances. */
export function createInstancesRepository(db: Kysely<Database>) {
  return {
    async beat(id: string, startedAt: string, now: string): Promise<void> {
      await db
        .insertInto('instances')
        .values({ id, started_at: startedAt, seen_at: now })
        .onConflict((oc) => oc.column('id').doUpdateSet({ seen_at: now }))
        .execute();
    },
    /** Instances whose heartbeat is not older than `since`. */
    async countAlive(since: string): Promise<number> {
      const row = await db
        .selectFrom('instances')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('seen_at', '>=', since)
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },
    async remove(id: string): Promise<void> {
      await db.deleteFrom('instances').where('id', '=', id).execute();
    },
    /** Rows of instances gone for long (a crashed instance never removes its own). */
    async purgeOlderThan(before: string): Promise<void> {
      await db.deleteFrom('instances').where('seen_at', '<', before).execute();
    },
  };
}

export type InstancesRepository = ReturnType<typeof createInstancesRepository>;
