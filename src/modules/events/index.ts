/** What other modules may use of `events`; everything else in the folder is its own. */
export type { DomainEvent, EventType, StoredEvent } from './service.js';
