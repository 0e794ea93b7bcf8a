/** What other modules may use of `events`; everything else in the folder is its own. */
export {
  BROADCAST_EVENT_TYPES,
  type BroadcastEvent,
  type BroadcastEventType,
  type DomainEvent,
  type EventType,
  KEY_EVENT_TYPES,
  type StoredEvent,
} from './service.js';
