import ipaddr from 'ipaddr.js';
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
};

/** The scope a route's operation needs. */
export function scopeOf(operation: Operation): Scope {
  return SCOPE_OF[operation];
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** A key's own rules beyond its plan, as authentication applies them. */
export interface KeyPolicy {
  /** When the key stops working (ISO 8601), or null. */
  readonly expiresAt: string | null;
  /** Set when the key was rolled: its `expiresAt` is the end of the overlap. */
  readonly rolled: boolean;
  /** The operations the key may call; null = every operation of its plan. */
  readonly scopes: readonly Scope[] | null;
  /** The addresses the key may be used from, as written, and parsed; null = any. */
  readonly allowlist: { readonly text: readonly string[]; readonly cidrs: readonly Cidr[] } | null;
  /** Requests per minute per endpoint; null = the plan's. */
  readonly rateLimitPerMinute: number | null;
  /** Calls per calendar month (UTC); null = no quota. */
  readonly monthlyQuota: number | null;
}

/** A CIDR (`203.0.113.0/24`, `2001:db8::/32`) or a single address, parsed; null when it is neither. */
export function parseCidr(text: string): Cidr | null {
  try {
    if (text.includes('/')) return ipaddr.parseCIDR(text);
    const address = ipaddr.parse(text);
    return [address, address.kind() === 'ipv4' ? 32 : 128];
  } catch {
    return null;
  }
}

/** Whether `address` (as `request.ip` gives it) is inside one of the CIDRs. */
export function addressAllowed(address: string, cidrs: readonly Cidr[]): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address);
  } catch {
    return false;
  }
  for (const [range, bits] of cidrs) {
    if (parsed.kind() === range.kind() && parsed.match(range as never, bits)) return true;
    // An IPv4 range also takes the address in its IPv4-mapped IPv6 form, and the other way round.
    if (range.kind() === 'ipv6' && parsed.kind() === 'ipv4') {
      const mapped = (parsed as ipaddr.IPv4).toIPv4MappedAddress();
      if (mapped.match(range as ipaddr.IPv6, bits)) return true;
    }
  }
  return false;
}

/** The policy of a stored key (its JSON columns parsed). */
export function policyOf(row: {
  expires_at: string | null;
  rolled_to: string | null;
  scopes: string | null;
  ip_allowlist: string | null;
  rate_limit_per_minute: number | null;
  monthly_quota: number | string | null;
}): KeyPolicy {
  const allowlist = row.ip_allowlist === null ? null : (JSON.parse(row.ip_allowlist) as string[]);
  return {
    expiresAt: row.expires_at,
    rolled: row.rolled_to !== null,
    scopes: row.scopes === null ? null : (JSON.parse(row.scopes) as Scope[]),
    allowlist:
      allowlist === null
        ? null
        : { text: allowlist, cidrs: allowlist.map(parseCidr).filter((c): c is Cidr => c !== null) },
    rateLimitPerMinute: row.rate_limit_per_minute === null ? null : Number(row.rate_limit_per_minute),
    monthlyQuota: row.monthly_quota === null ? null : Number(row.monthly_quota),
  };
}
