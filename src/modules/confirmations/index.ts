/** What other modules may use of `confirmations`; everything else in the folder is its own. */
export { publicKeyPem, verifyHeadSignature } from './anchor.js';
export { toTaxauthCode } from './authority.js';
export { hashRecord } from './chain.js';
export type { ConfirmationsService } from './service.js';
