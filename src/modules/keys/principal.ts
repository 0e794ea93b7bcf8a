import type { Mode, Plan } from './plans.js';
import type { KeyPolicy } from './policy.js';

/** The authenticated caller, as handlers see it. */
export interface ApiKeyPrincipal {
  id: string;
  accountId: string;
  plan: Plan;
  mode: Mode;
  defaultRequesterVat: string | null;
  /** Set on the playground's demo key only (see modules/playground). */
  playground?: true;
  /** The key's own rules (expiry, scopes, allowlist, limits); absent for work stored on its behalf. */
  policy?: KeyPolicy;
}
