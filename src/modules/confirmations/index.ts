/** What other modules may use of `confirmations`; everything else in the folder is its own. */
export { HEAD_FORMAT, headMessage, publicKeyPem, verifyHeadSignature } from './anchor.js';
export { toTaxauthCode } from './authority.js';
export { hashRecord } from './chain.js';
export type { ConfirmationsRepository } from './repository.js';
export type { ConfirmationsService } from './service.js';
export { evidenceSummary } from './service.js';
