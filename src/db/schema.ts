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
  /** When the answer could not be written to the client after this record was committed; null = written. */
  undelivered_at?: string | null;
}

/** Domain events (`validation.completed`, `batch.completed`, `vat_number.changed`, …), written with the call's other writes. */
export interface EventsTable {
  id: string;
  account_id: string;
  key_id: string;
  type: string;
  /** The exact response envelope the API returned, as JSON text. */
  payload: string;
  created_at: string;
}

/** The last registry answer per VAT number (cache, and the stored answer for degraded service). */
export interface RegistryAnswersTable {
  vat_number: string;
  source: string;
  valid: number;
  name: string | null;
  address: string | null;
  checked_at: string;
}

/** A receiver registered by an API key. The secret is kept because every attempt is signed anew. */
export interface WebhookEndpointsTable {
  id: string;
  key_id: string;
  account_id: string;
  url: string;
  /** `whsec_` + base64 of 24 random bytes; the HMAC key of every delivery. */
  secret: string;
  disabled: number;
  created_at: string;
}

/** The durable webhook queue: one row per (event, endpoint), claimed by workers under a lease. */
export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  key_id: string;
  event_id: string;
  event_type: string;
  /** The delivered body, exactly as sent on every attempt. */
  body: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  max_attempts: number;
  next_attempt_at: string | null;
  locked_until: string | null;
  claimed_by: string | null;
  last_error: string | null;
  created_at: string;
  finished_at: string | null;
}

/** One HTTP attempt of a delivery; `id` is the attempt's `Service-Delivery-Id`. */
export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  endpoint_id: string;
  attempt: number;
  status: 'succeeded' | 'failed';
  http_status: number | null;
  latency_ms: number;
  error: string | null;
  created_at: string;
}

/** A qualified confirmation kept 10 years as evidence; one link of the hash chain (`seq`, `prev_hash`, `hash`). */
export interface ConfirmationsTable {
  id: string;
  seq: number;
  account_id: string;
  key_id: string;
  request_id: string;
  mode: string;
  vat_number: string;
  requester_vat_number: string;
  /** Upstream status as sent, e.g. `evatr-0000`. */
  taxauth_status: string;
  valid: number;
  qualified: number;
  /** The API request body as JSON text. */
  api_request: string;
  upstream_url: string;
  /** The exact request and response bodies exchanged with the authority. */
  upstream_request: string;
  upstream_response: string;
  upstream_http_status: number;
  upstream_id: string | null;
  /** Our response body exactly as sent. */
  response: string;
  created_at: string;
  retain_until: string;
  prev_hash: string;
  hash: string;
}

/** The single row (id 1) naming the last link of the confirmation chain. */
export interface ConfirmationChainHeadTable {
  id: number;
  seq: number;
  hash: string;
  /** Ed25519 signature (base64) of the head with OPENVAT_EVIDENCE_KEY; null without a key. */
  signature: string | null;
}

/** An operator's signed acknowledgement of a chain head (`openvat evidence acknowledge`). */
export interface EvidenceAcknowledgementsTable {
  id: string;
  seq: number;
  hash: string;
  acknowledged_at: string;
  /** The operator's words: why the head is accepted. */
  reason: string;
  /** The verification report (JSON) the operator reviewed. */
  report: string;
  /** Ed25519 signature (base64) of `acknowledgementMessage(id, seq, hash, acknowledged_at)`. */
  signature: string;
}

/** Idempotency keys of confirmation requests, per account. */
export interface ConfirmationIdempotencyTable {
  account_id: string;
  idempotency_key: string;
  fingerprint: string;
  /** `in_flight` while the authority is being asked, `completed` once the response is stored. */
  state: string;
  /** The request that holds the key (its request id). */
  owner: string;
  key_id: string;
  confirmation_id: string | null;
  status_code: number | null;
  response: string | null;
  created_at: string;
  locked_at: string;
  expires_at: string;
}

/** A batch job (`"async": true`): the key that asked, its plan and mode, and the job's state. */
export interface BatchJobsTable {
  id: string;
  key_id: string;
  account_id: string;
  plan: string;
  mode: string;
  /** The request id of the call that created the job (its audit record is written at completion). */
  request_id: string;
  /** The request body as JSON text. */
  request_body: string;
  requester_vat_number: string | null;
  /** `queued` | `running` | `completed` | `cancelled` */
  status: string;
  total: number;
  created_at: string;
  started_at: string | null;
  /** When the job ended: completed, or cancelled (then `cancel_reason` says why). */
  completed_at: string | null;
  /** `key_revoked` for a job cancelled because its key was revoked; null otherwise. */
  cancel_reason: string | null;
}

/** One input number of a batch job: a leased queue row until it is `done`, then its result. */
export interface BatchItemsTable {
  /** `<job id>:<position>` */
  id: string;
  job_id: string;
  position: number;
  vat_number: string;
  /** The number's prefix (`XX` when it has none): items are claimed interleaved by country. */
  country: string;
  /** Ordinal of the item among its job's items of the same country. */
  rank: number;
  /** `pending` | `done` | `cancelled` (its job was cancelled before it was validated) */
  status: string;
  ok: number | null;
  /** `{ok: true, data}` or `{ok: false, error: {code, message}}` as JSON text. */
  result: string | null;
  /** Where a successful answer came from: `<source>:<source_status>`, e.g. `vies:live`. */
  source: string | null;
  attempts: number;
  next_attempt_at: string;
  /** Until when an unavailable registry is retried (set at the first unavailable answer). */
  retry_until: string | null;
  last_error: string | null;
  locked_until: string | null;
  claimed_by: string | null;
  finished_at: string | null;
}

/** Requests per key, UTC day and operation; `errors` counts answers with a status of 400 or more. */
export interface UsageDailyTable {
  key_id: string;
  day: string;
  operation: string;
  /** bigint: PostgreSQL returns it as a string. */
  requests: number | string;
  errors: number | string;
}

/** A running instance and its last heartbeat (ISO timestamps). */
export interface InstancesTable {
  id: string;
  started_at: string;
  seen_at: string;
}

/** A VAT number kept checked for an API key, with its last known state and its durable schedule. */
export interface MonitorsTable {
  id: string;
  key_id: string;
  account_id: string;
  plan: string;
  mode: string;
  /** Normalised, with its prefix. */
  vat_number: string;
  /** The number's prefix (`DE`, `EL`, `CHE`, …): checks are paced per member state. */
  country: string;
  /** `daily` | `weekly` | `monthly` */
  interval: string;
  reference: string | null;
  /** JSON object as text. */
  metadata: string | null;
  /** `valid` | `invalid` | `unknown` (no successful check yet) */
  status: string;
  name: string | null;
  address: string | null;
  /** The registry of the last successful check. */
  source: string | null;
  /** 1 once no check succeeded for the configured time. */
  stale: number;
  /** Checks made (successful or not). */
  checks: number;
  /** Failed checks since the last successful one. */
  failures: number;
  last_checked_at: string | null;
  last_attempt_at: string | null;
  /** The first failed check since the last successful one. */
  failing_since: string | null;
  last_error: string | null;
  last_change_at: string | null;
  next_check_at: string;
  locked_until: string | null;
  claimed_by: string | null;
  created_at: string;
  /** A hash of the address that created a monitor of the playground's demo key; null for other keys. */
  visitor: string | null;
}

/** One check of a monitor. */
export interface MonitorChecksTable {
  id: string;
  monitor_id: string;
  /** `created` | `scheduled` | `manual` */
  trigger: string;
  /** `valid` | `invalid` | `unavailable` */
  outcome: string;
  source: string | null;
  source_status: string | null;
  name: string | null;
  address: string | null;
  error: string | null;
  /** The audit record of the check (when an answer was obtained). */
  request_id: string | null;
  checked_at: string;
}

/** A change a check found: `became_invalid` | `became_valid` | `name_changed` | `address_changed`. */
export interface MonitorChangesTable {
  id: string;
  monitor_id: string;
  key_id: string;
  check_id: string;
  kind: string;
  before: string | null;
  after: string | null;
  detected_at: string;
}

/** A change of a country's rates learnt by the rates sync, in force from `valid_from` once applied. */
export interface RateChangesTable {
  id: string;
  country_code: string;
  valid_from: string;
  /** `{standard_rate, reduced_rates, super_reduced_rate, parking_rate}` as JSON text. */
  rates: string;
  source: string;
  learnt_at: string;
  /** `applied`, `held` (waits for an operator), `rejected`, `superseded` or `withdrawn`. */
  status: string;
  reason: string | null;
  decided_at: string | null;
  decided_by: string | null;
}

/** A scheduled sync, claimed under a lease (one instance at a time). */
export interface RateSyncsTable {
  id: string;
  locked_until: string | null;
  claimed_by: string | null;
  next_run_at: string;
  last_run_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  admin_keys: AdminKeysTable;
  key_month_calls: KeyMonthCallsTable;
  admin_audit_log: AdminAuditLogTable;
  audits: AuditsTable;
  events: EventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  registry_answers: RegistryAnswersTable;
  confirmations: ConfirmationsTable;
  confirmation_chain_head: ConfirmationChainHeadTable;
  confirmation_idempotency: ConfirmationIdempotencyTable;
  evidence_acknowledgements: EvidenceAcknowledgementsTable;
  batch_jobs: BatchJobsTable;
  batch_items: BatchItemsTable;
  usage_daily: UsageDailyTable;
  instances: InstancesTable;
  monitors: MonitorsTable;
  monitor_checks: MonitorChecksTable;
  monitor_changes: MonitorChangesTable;
  rate_changes: RateChangesTable;
  rate_syncs: RateSyncsTable;
}

export type { Generated };
