/** What other modules may use of `keys`; everything else in the folder is its own. */

export type { AccountPatch, AccountRecord } from './accounts.js';
export type { RequireKey } from './auth.js';
export { playgroundLimited, principalOf } from './auth.js';
export { type AuthFailures, tooManyFailures } from './auth-failures.js';
export type { Playground, PlaygroundBudget } from './demo-key.js';
export { PLAYGROUND_PRINCIPAL, playgroundBudgetHeaders } from './demo-key.js';
export type { KeyRecord, KeyStatus } from './key-records.js';
export type { KeySettings } from './key-settings.js';
export type { KeyManagement, RecordWrite, WriteRecord } from './manage.js';
export type { Mode, Operation, Plan } from './plans.js';
export {
  AUDIT_RETENTION_DAYS,
  MODES,
  operationName,
  PLANS,
  plansFor,
  UNFINISHED_BATCH_JOBS,
} from './plans.js';
export { SCOPES, type Scope } from './policy.js';
export type { ApiKeyPrincipal } from './principal.js';
export type { KeyListFilter } from './repository.js';
export type { KeyState } from './service.js';
export { principalOfStoredWork } from './service.js';
