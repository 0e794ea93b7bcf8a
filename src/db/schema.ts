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
}

export interface AuditsTable {
  request_id: string;
  key_id: string;
  endpoint: string;
  /** The response body exactly as sent. */
  response: string;
  request_body: string | null;
  created_at: string;
  expires_at: string;
  latency_ms: number | null;
  status_code: number | null;
  valid: number | null;
}

/** Domain events (`validation.completed`, `batch.completed`), written with the call's other writes. */
export interface EventsTable {
  id: string;
  account_id: string;
  key_id: string;
  type: string;
  /** The exact response envelope the API returned, as JSON text. */
  payload: string;
  created_at: string;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  audits: AuditsTable;
  events: EventsTable;
}

export type { Generated };
