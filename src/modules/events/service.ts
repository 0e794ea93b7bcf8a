import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import type { EventsRepository } from './repository.js';

export type EventType =
  | 'validation.completed'
  | 'batch.completed'
  | 'vat_number.changed'
  | 'vat_number.check_failed';

export interface DomainEvent {
  accountId: string;
  keyId: string;
  type: EventType;
  /** The exact response envelope the API returned, as JSON text. */
  payload: string;
}

/** An event as stored: what the webhook deliveries of it carry. */
export type StoredEvent = DomainEvent & { id: string; createdAt: string };

/** Records domain events in the caller's transaction (the outbox's, with the call's other writes). */
export function createEventsService(deps: { repository: EventsRepository; clock: Clock; ids: IdGenerator }) {
  return {
    async record(event: DomainEvent, trx: Kysely<Database>): Promise<StoredEvent> {
      const id = deps.ids.uuid();
      const createdAt = deps.clock.now().toISOString();
      await deps.repository.insert(
        {
          id,
          account_id: event.accountId,
          key_id: event.keyId,
          type: event.type,
          payload: event.payload,
          created_at: createdAt,
        },
        trx,
      );
      return { ...event, id, createdAt };
    },
  };
}

export type EventsService = ReturnType<typeof createEventsService>;
