/** What other modules may use of `outbox`; everything else in the folder is its own. */
export type { SendRecorded } from './reply.js';
export type { Outbox } from './service.js';
