/** Tables of accounts, API keys and the admin plane (same conventions as schema.ts). */
import type { Generated } from 'kysely';

/**
 * Table types shared by SQLite and PostgreSQL. Timestamps are ISO 8601 UTC strings with
 * milliseconds (`2026-01-02T03:04:05.678Z`), which sort correctly as text in both databases;
 * JSON documents are stored as text so the bytes stay exactly as written; flags are 0/1 integers.
 */
export interface AccountsTable {
  id: string;
  name: string | null;
  created_at: string;
  /** The operator's own id of the account (their customer number, say). */
  external_id: string | null;
  /** JSON object text. */
  metadata: string | null;
  /** 1: every key of the account is refused. */
  disabled: Generated<number>;
  updated_at: string | null;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  /** SHA-256 (hex) of the full key; the key itself is never stored. */
  key_hash: string;
  /** The first characters of the key, e.g. `svc_test_3kQ9`, so an operator can tell keys apart. */
  key_prefix: string;
  plan: string;
  mode: string;
  default_requester_vat: string | null;
  created_at: string;
  revoked_at: string | null;
  name: string | null;
  expires_at: string | null;
  /** JSON array of operation names; null = every operation of the plan. */
  scopes: string | null;
  /** JSON array of CIDRs; null = any address. */
  ip_allowlist: string | null;
  /** null = the plan's. */
  rate_limit_per_minute: number | null;
  /** Calls per calendar month (UTC); null = no quota. */
  monthly_quota: number | string | null;
  /** JSON object text. */
  metadata: string | null;
  last_used_at: string | null;
  /** The key this one was rolled to (it then expires at the end of the overlap). */
  rolled_to: string | null;
  updated_at: string | null;
  /**
   * The key whose monthly count (`key_month_calls`) this key's calls go to: the first key of its roll
   * chain, so rolling does not start the month's count again; null = its own id.
   */
  quota_key_id: string | null;
}

/** Operators' keys of the admin API (`svc_admin_…`). */
export interface AdminKeysTable {
  id: string;
  name: string;
  /** `admin` (everything) or `read`. */
  role: string;
  key_hash: string;
  key_prefix: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** Calls counted against a key's monthly quota, per UTC month (`YYYY-MM`). */
export interface KeyMonthCallsTable {
  key_id: string;
  month: string;
  calls: number | string;
}

/** Every write through the admin API, append-only. */
export interface AdminAuditLogTable {
  id: string;
  actor_id: string;
  actor_name: string;
  action: string;
  target_type: string;
  target_id: string;
  /** JSON object text: the fields changed, before and after (never a secret). */
  changes: string;
  request_id: string | null;
  client_address: string | null;
  created_at: string;
}
