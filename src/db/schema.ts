import type { Generated } from 'kysely';
import type {
  AccountsTable,
  AdminAuditLogTable,
  AdminKeysTable,
  ApiKeysTable,
  KeyMonthCallsTable,
} from './schema-accounts.js';
import type {
  BatchItemsTable,
  BatchJobsTable,
  InstancesTable,
  MonitorChangesTable,
  MonitorChecksTable,
  MonitorsTable,
  NationalFilePartsTable,
  NationalFileRowsTable,
  NationalFileSyncsTable,
  RateChangesTable,
  RateEventChecksTable,
  RateEventsTable,
  RateSyncsTable,
  ScheduledSyncsTable,
  UsageDailyTable,
} from './schema-work.js';

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

/** The last Peppol look-up of a participant identifier (`ICD:value`), its part of the answer as JSON. */
export interface PeppolAnswersTable {
  participant_id: string;
  answer: string;
  checked_at: string;
  expires_at: string;
}

/** The last answer of an EORI service (EOS or HMRC) per number: the cache and the degraded answer. */
export interface EoriAnswersTable {
  /** Canonical: country code and identifier, upper case (`DE123456789012345`, `GB123456789000`). */
  eori: string;
  /** `eos` or `hmrc`. */
  source: string;
  valid: number;
  name: string | null;
  street: string | null;
  postal_code: string | null;
  city: string | null;
  country: string | null;
  /** The service's own word, e.g. `0 Valid`, `valid: true`. */
  upstream_status: string;
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
  /** JSON array of the event names it receives; null = the default events of its key. */
  events: string | null;
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

/** An RFC 3161 time-stamp token over a signed chain head (docs/evidence.md). */
export interface EvidenceTimestampsTable {
  id: string;
  head_seq: number;
  head_hash: string;
  /** The token's own time (TSTInfo genTime), ISO 8601. */
  gen_time: string;
  tsa_url: string;
  /** TSTInfo serial number, hex. */
  serial: string;
  /** The token: DER of the CMS ContentInfo, base64. */
  token: string;
  /** The certificates the token carries, PEM, signer first. */
  chain: string;
  created_at: string;
}

/** The leased schedule of the time-stamping run (one row, `evidence-head`), claimed like the scheduled syncs. */
export type EvidenceTimestampRunsTable = ScheduledSyncsTable;

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
  peppol_answers: PeppolAnswersTable;
  eori_answers: EoriAnswersTable;
  confirmations: ConfirmationsTable;
  confirmation_chain_head: ConfirmationChainHeadTable;
  confirmation_idempotency: ConfirmationIdempotencyTable;
  evidence_acknowledgements: EvidenceAcknowledgementsTable;
  evidence_timestamps: EvidenceTimestampsTable;
  evidence_timestamp_runs: EvidenceTimestampRunsTable;
  batch_jobs: BatchJobsTable;
  batch_items: BatchItemsTable;
  usage_daily: UsageDailyTable;
  instances: InstancesTable;
  monitors: MonitorsTable;
  monitor_checks: MonitorChecksTable;
  monitor_changes: MonitorChangesTable;
  rate_changes: RateChangesTable;
  rate_syncs: RateSyncsTable;
  rate_events: RateEventsTable;
  rate_event_checks: RateEventChecksTable;
  national_file_parts: NationalFilePartsTable;
  national_file_rows: NationalFileRowsTable;
  national_file_syncs: NationalFileSyncsTable;
}

export type * from './schema-accounts.js';
export type * from './schema-work.js';
export type { Generated };
