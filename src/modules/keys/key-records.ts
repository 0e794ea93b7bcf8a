import type { Clock } from '../../lib/clock.js';
import { metadataOf } from './accounts.js';
import type { Mode, Plan } from './plans.js';
import type { Scope } from './policy.js';
import type { QuotaRepository } from './quota-repository.js';
import type { ApiKeyRow, KeysRepository } from './repository.js';

export type KeyStatus = 'active' | 'expired' | 'revoked';

/** A key as the admin API shows it (never its secret). */
export interface KeyRecord {
  id: string;
  account_id: string;
  name: string | null;
  prefix: string;
  plan: Plan;
  mode: Mode;
  status: KeyStatus;
  default_requester_vat: string | null;
  expires_at: string | null;
  scopes: Scope[] | null;
  ip_allowlist: string[] | null;
  rate_limit_per_minute: number | null;
  monthly_quota: number | null;
  metadata: Record<string, string>;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  rolled_to: string | null;
  usage_this_month: number;
}

export function keyStatus(row: Pick<ApiKeyRow, 'revoked_at' | 'expires_at'>, now: number): KeyStatus {
  if (row.revoked_at !== null) return 'revoked';
  if (row.expires_at !== null && Date.parse(row.expires_at) <= now) return 'expired';
  return 'active';
}

/** Keys as the admin API shows them: their stored settings with their use this month. */
export function createKeyRecords(deps: {
  repository: Pick<KeysRepository, 'usageOf'>;
  /** The calls counted against monthly quotas, and the quota of each plan (null = unlimited). */
  quotas: {
    repository: Pick<QuotaRepository, 'counted'>;
    planDefaults: Readonly<Record<Plan, number | null>>;
  };
  clock: Clock;
}) {
  const { repository, quotas, clock } = deps;
  const month = () => clock.now().toISOString().slice(0, 7);

  /**
   * Each key's use this month and last day of use. `calls` is what counts against the quota for a
   * key that has one (its own or its plan's): the calls counted in `key_month_calls` (on the count
   * it shares with the keys of its roll chain); for a key without, its requests this month from the
   * usage counts.
   */
  async function usageOf(rows: readonly ApiKeyRow[]) {
    const thisMonth = month();
    const ids = rows.map((r) => r.id);
    const countOf = (row: ApiKeyRow) => row.quota_key_id ?? row.id;
    const [used, counted] = await Promise.all([
      repository.usageOf(ids, thisMonth),
      quotas.repository.counted([...new Set(rows.map(countOf))], thisMonth),
    ]);
    const usage = new Map<string, { calls: number; lastDay: string | null }>();
    for (const row of rows) {
      const requests = used.get(row.id);
      const limited = row.monthly_quota !== null || quotas.planDefaults[row.plan as Plan] !== null;
      usage.set(row.id, {
        calls: limited ? (counted.get(countOf(row)) ?? 0) : (requests?.calls ?? 0),
        lastDay: requests?.lastDay ?? null,
      });
    }
    return usage;
  }

  function toKeyRecord(
    row: ApiKeyRow,
    used: { calls: number; lastDay: string | null } | undefined,
  ): KeyRecord {
    return {
      id: row.id,
      account_id: row.account_id,
      name: row.name,
      prefix: row.key_prefix,
      plan: row.plan as Plan,
      mode: row.mode as Mode,
      status: keyStatus(row, clock.millis()),
      default_requester_vat: row.default_requester_vat,
      expires_at: row.expires_at,
      scopes: row.scopes === null ? null : (JSON.parse(row.scopes) as Scope[]),
      ip_allowlist: row.ip_allowlist === null ? null : (JSON.parse(row.ip_allowlist) as string[]),
      rate_limit_per_minute: row.rate_limit_per_minute === null ? null : Number(row.rate_limit_per_minute),
      monthly_quota: row.monthly_quota === null ? null : Number(row.monthly_quota),
      metadata: metadataOf(row.metadata),
      created_at: row.created_at,
      last_used_at: used?.lastDay ?? null,
      revoked_at: row.revoked_at,
      rolled_to: row.rolled_to,
      usage_this_month: used?.calls ?? 0,
    };
  }

  /** One key's record. */
  async function keyRecord(row: ApiKeyRow): Promise<KeyRecord> {
    return toKeyRecord(row, (await usageOf([row])).get(row.id));
  }

  /** The records of a page of keys, with one read of their use. */
  async function keyRecords(rows: readonly ApiKeyRow[]): Promise<KeyRecord[]> {
    const used = await usageOf(rows);
    return rows.map((row) => toKeyRecord(row, used.get(row.id)));
  }

  return { keyRecord, keyRecords };
}
