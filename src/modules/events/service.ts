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

/** Called inside the caller's transaction, so the event exists exactly when the call's other writes do. */
export type EventListener = (
  event: DomainEvent & { id: string; createdAt: string },
  trx: Kysely<Database>,
) => Promise<void>;

/**
 * Records domain events in the caller's transaction. Listeners (the webhook outbox) run in the same
 * transaction, so a delivery row exists if and only if the event does.
 */
export function createEventsService(deps: { repository: EventsRepository; clock: Clock; ids: IdGenerator }) {
  const listeners: EventListener[] = [];
  return {
    onEvent(listener: EventListener) {
      listeners.push(listener);
    },
    async record(event: DomainEvent, trx: Kysely<Database>): Promise<string> {
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
      for (const listener of listeners) await listener({ ...event, id, createdAt }, trx);
      return id;
    },
  };
}

export type EventsService = ReturnType<typeof createEventsService>;
