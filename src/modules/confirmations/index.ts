/** What other modules may use of `confirmations`; everything else in the folder is its own. */
export { HEAD_FORMAT, headMessage, verifyHeadSignature } from './anchor.js';
export type { ConfirmationsRepository } from './repository.js';
export type { ConfirmationsService } from './service.js';
