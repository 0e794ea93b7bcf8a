import type { Kysely } from 'kysely';
import type { Database, EventsTable } from '../../db/schema.js';

export function createEventsRepository(db: Kysely<Database>) {
  return {
    async insert(event: EventsTable, trx: Kysely<Database> = db) {
      await trx.insertInto('events').values(event).execute();
    },
    async listForKey(keyId: string, trx: Kysely<Database> = db): Promise<EventsTable[]> {
      return trx
        .selectFrom('events')
        .selectAll()
        .where('key_id', '=', keyId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
    },
  };
}

export type EventsRepository = ReturnType<typeof createEventsRepository>;
