import { BROADCAST_EVENT_TYPES, KEY_EVENT_TYPES } from '../events/index.js';

/** Every event an endpoint may list in `events`, in the order they are stored and shown. */
export const SUBSCRIBABLE_EVENTS = [...KEY_EVENT_TYPES, ...BROADCAST_EVENT_TYPES] as const;

export type SubscribableEvent = (typeof SUBSCRIBABLE_EVENTS)[number];

/** The events an endpoint registered without `events` receives: its key's own, as before `events` existed. */
export const DEFAULT_EVENTS: readonly string[] = KEY_EVENT_TYPES;

/** The stored form of a subscription: each event once, in the canonical order; null = the default events. */
export function storedEvents(events: readonly string[] | null | undefined): string | null {
  if (events === null || events === undefined) return null;
  return JSON.stringify(SUBSCRIBABLE_EVENTS.filter((e) => events.includes(e)));
}

/** A stored subscription as shown: the listed events, or null for the default ones. */
export function eventsOf(stored: string | null): string[] | null {
  if (stored === null) return null;
  return JSON.parse(stored) as string[];
}

/** Whether an endpoint with this stored subscription receives events of `type`. */
export function receives(stored: string | null, type: string): boolean {
  return (eventsOf(stored) ?? DEFAULT_EVENTS).includes(type);
}
