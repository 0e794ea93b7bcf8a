import { CompiledQuery, type Kysely } from 'kysely';
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
  // Compiled by Kysely once and run with each event's values, as the audit record's insert is (see
  // the audits repository for the measurement).
  let insertSql: string | null = null;
  return {
    async insert(event: EventsTable, trx: Kysely<Database> = db) {
      insertSql ??= trx
        .insertInto('events')
        .values(Object.fromEntries(COLUMNS.map((c) => [c, event[c] ?? null])) as unknown as EventsTable)
        .compile().sql;
      await trx.executeQuery(
        CompiledQuery.raw(
          insertSql,
          COLUMNS.map((c) => event[c] ?? null),
        ),
      );
    },
    /** Inserts events with one statement. */
    async insertMany(events: readonly EventsTable[], trx: Kysely<Database> = db) {
      if (events.length === 1 && events[0]) return this.insert(events[0], trx);
      if (events.length > 0)
        await trx
          .insertInto('events')
          .values([...events])
          .execute();
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
