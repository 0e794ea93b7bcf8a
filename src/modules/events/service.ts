import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import type { EventsRepository } from './repository.js';

/** The events a key's own work causes, sent to its endpoints (every one of them unless it chose). */
export const KEY_EVENT_TYPES = [
  'validation.completed',
  'batch.completed',
  'vat_number.changed',
  'vat_number.check_failed',
  'peppol.changed',
] as const;

export type EventType = (typeof KEY_EVENT_TYPES)[number];

/** Events no key causes (the rates in force changed), sent only to endpoints that subscribe to them. */
export const BROADCAST_EVENT_TYPES = ['rates.changed'] as const;

export type BroadcastEventType = (typeof BROADCAST_EVENT_TYPES)[number];

/**
 * A broadcast event as stored by the module that noticed it (once, whichever instance noticed it
 * first): delivered to every enabled endpoint, of any key, that subscribes to its type.
 */
export interface BroadcastEvent {
  id: string;
  type: BroadcastEventType;
  /** The delivered `data`, as JSON text. */
  payload: string;
  createdAt: string;
}

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
      const [stored] = await this.recordMany([event], trx);
      return stored as StoredEvent;
    },

    /** Records several events with one statement; returns them as stored, in order. */
    async recordMany(events: readonly DomainEvent[], trx: Kysely<Database>): Promise<StoredEvent[]> {
      if (events.length === 0) return [];
      const createdAt = deps.clock.now().toISOString();
      const stored = events.map((event) => ({ ...event, id: deps.ids.uuid(), createdAt }));
      await deps.repository.insertMany(
        stored.map((event) => ({
          id: event.id,
          account_id: event.accountId,
          key_id: event.keyId,
          type: event.type,
          payload: event.payload,
          created_at: event.createdAt,
        })),
        trx,
      );
      return stored;
    },
  };
}

export type EventsService = ReturnType<typeof createEventsService>;
