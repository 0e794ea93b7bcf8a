import type { Kysely } from 'kysely';
import { compiledInsert } from '../../db/compiled-insert.js';
import type { Database, EventsTable } from '../../db/schema.js';

const COLUMNS = [
  'id',
  'account_id',
  'key_id',
  'type',
  'payload',
  'created_at',
] as const satisfies ReadonlyArray<keyof EventsTable>;

export function createEventsRepository(db: Kysely<Database>) {
  const insertRows = compiledInsert('events', COLUMNS);
  return {
    async insert(event: EventsTable, trx: Kysely<Database> = db) {
      await insertRows([event], trx);
    },
    /** Inserts events with one statement. */
    async insertMany(events: readonly EventsTable[], trx: Kysely<Database> = db) {
      await insertRows(events, trx);
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
