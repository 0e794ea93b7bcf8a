/** What other modules may use of `keys`; everything else in the folder is its own. */

export type { RequireKey } from './auth.js';
export { principalOf } from './auth.js';
export type { Mode, Operation, Plan } from './plans.js';
export { AUDIT_RETENTION_DAYS, operationName, PLANS, plansFor, UNFINISHED_BATCH_JOBS } from './plans.js';
export type { ApiKeyPrincipal } from './service.js';
export { principalOfStoredWork } from './service.js';
