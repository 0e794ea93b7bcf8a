import { type Cidr, readStoredAllowlist } from './allowlist.js';
import type { Operation } from './plans.js';

/** The operation names a key's `scopes` may list. */
export const SCOPES = [
  'validate',
  'validate_batch',
  'decide',
  'confirm',
  'audits',
  'webhooks',
  'monitors',
  'usage',
  'peppol',
] as const;
export type Scope = (typeof SCOPES)[number];

const SCOPE_OF: Record<Operation, Scope> = {
  validate: 'validate',
  batch: 'validate_batch',
  decide: 'decide',
  confirm: 'confirm',
  audits: 'audits',
  webhooks: 'webhooks',
  monitors: 'monitors',
  usage: 'usage',
  peppol: 'peppol',
};

/** The scope a route's operation needs. */
export function scopeOf(operation: Operation): Scope {
  return SCOPE_OF[operation];
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** A key's own rules beyond its plan, as authentication applies them. */
export interface KeyPolicy {
  /** When the key stops working (ISO 8601), or null. */
  readonly expiresAt: string | null;
  /** Set when the key was rolled: its `expiresAt` is the end of the overlap. */
  readonly rolled: boolean;
  /** The operations the key may call; null = every operation of its plan. */
  readonly scopes: readonly Scope[] | null;
  /**
   * The addresses the key may be used from: the entries as stored, their ranges, and the stored
   * entries that admit nothing (not addresses as written; see `readStoredAllowlist`); null = any.
   */
  readonly allowlist: {
    readonly text: readonly string[];
    readonly cidrs: readonly Cidr[];
    readonly unusable: readonly string[];
  } | null;
  /** Requests per minute per endpoint; null = the plan's. */
  readonly rateLimitPerMinute: number | null;
  /** Calls per calendar month (UTC); null = no quota. */
  readonly monthlyQuota: number | null;
  /** The key whose monthly count the calls go to (a rolled key's successor shares it); null = its own. */
  readonly quotaKeyId: string | null;
}

/** The policy of a stored key (its JSON columns parsed). */
export function policyOf(row: {
  expires_at: string | null;
  rolled_to: string | null;
  scopes: string | null;
  ip_allowlist: string | null;
  rate_limit_per_minute: number | null;
  monthly_quota: number | string | null;
  quota_key_id: string | null;
}): KeyPolicy {
  const allowlist = row.ip_allowlist === null ? null : (JSON.parse(row.ip_allowlist) as string[]);
  return {
    expiresAt: row.expires_at,
    rolled: row.rolled_to !== null,
    scopes: row.scopes === null ? null : (JSON.parse(row.scopes) as Scope[]),
    allowlist: allowlist === null ? null : { text: allowlist, ...readStoredAllowlist(allowlist) },
    rateLimitPerMinute: row.rate_limit_per_minute === null ? null : Number(row.rate_limit_per_minute),
    monthlyQuota: row.monthly_quota === null ? null : Number(row.monthly_quota),
    quotaKeyId: row.quota_key_id,
  };
}
