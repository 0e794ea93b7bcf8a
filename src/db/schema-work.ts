/** Tables of background work: batch jobs, usage, instances, monitors and the rates sync (same conventions as schema.ts). */
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
  /** The parts its items add (`peppol`), comma-separated; null for none. */
  include: string | null;
}

/** One input number of a batch job: a leased queue row until it is `done`, then its result. */
export interface BatchItemsTable {
  /** `<job id>:<position>` */
  id: string;
  job_id: string;
  position: number;
  vat_number: string;
  /** What the item claims about the company (`{"name": …, "city": …}` as JSON); null for a plain number. */
  claim: string | null;
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
  /** 1 when the monitor also checks Peppol reachability (`"peppol": true`). */
  peppol: number;
  /** The last known Peppol answer `{"reachable", "can_receive_invoices"}` as JSON; null before one. */
  peppol_state: string | null;
  peppol_checked_at: string | null;
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

/** A `rates.changed` event, once per (country, day, kind, rates) whichever instance notices it first. */
export interface RateEventsTable {
  id: string;
  country_code: string;
  effective_from: string;
  /** `announced` (learnt before its day) or `in_force`. */
  kind: string;
  /** The rates from `effective_from` on, as JSON text. */
  rates: string;
  /** `tedb`, `curated` or `override`. */
  source: string;
  /** The delivered `data`, as JSON text. */
  payload: string;
  created_at: string;
}

/** How far the starts of rate periods have been looked for (`checked_at`), and since when (`since`). */
export interface RateEventChecksTable {
  id: string;
  since: string;
  checked_at: string;
}

/**
 * A scheduled sync, claimed under a lease (one instance at a time): the rows of `rate_syncs`,
 * `national_file_syncs` and `evidence_timestamp_runs` alike (see `createScheduledSyncs`).
 */
export interface ScheduledSyncsTable {
  id: string;
  locked_until: string | null;
  claimed_by: string | null;
  next_run_at: string;
  last_run_at: string | null;
  last_success_at: string | null;
  /** Why the last run failed (for a file register: its failed files), else null. */
  last_error: string | null;
}

/** The rates sync with TEDB. */
export type RateSyncsTable = ScheduledSyncsTable;

/** A part (one published file) of a national register's local copy, and the generation of rows answering for it. */
export interface NationalFilePartsTable {
  /** `si_furs` or `lv_vid`. */
  source: string;
  /** SI `PO`, `FO`, `DEJ`; LV `VAT`. */
  part: string;
  generation: string;
  /** The file's date, `YYYY-MM-DD`. */
  data_date: string;
  etag: string | null;
  last_modified: string | null;
  encoding: string;
  rows: number;
  fetched_at: string;
  /** When the server last confirmed the copy current (the download, or a later 304). */
  checked_at: string;
}

/** One row of a national register's file, in the generation a sync wrote it to. */
export interface NationalFileRowsTable {
  source: string;
  part: string;
  generation: string;
  /** The key looked up: SI the 8-digit tax number, LV `LV` + 11 digits. */
  number: string;
  /** The row (`NationalFileRow`) as JSON text. */
  row: string;
}

/** The scheduled sync of a file register (`id`: its source). */
export type NationalFileSyncsTable = ScheduledSyncsTable;
