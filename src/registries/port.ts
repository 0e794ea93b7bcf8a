/**
 * The registry port: one interface in front of every upstream VAT registry (VIES, HMRC, the Swiss
 * UID register, Brønnøysund). Expected outcomes are values: a registry that cannot answer returns
 * `{ kind: 'unavailable' }`, never a thrown error and never `valid: false`.
 */

export type RegistrySource = 'vies' | 'hmrc' | 'bfs' | 'brreg';

/** A VAT number already parsed and normalised by the vat-numbers module. */
export interface RegistryVatNumber {
  /** VAT prefix as the registries use it: `DE`, `EL` (Greece), `XI`, `GB`, `CH`, `NO`, … */
  country: string;
  /** The national part without the prefix and without separators, e.g. `123456789` or `E123456789` (CH, as `CHE…` digits only: `123456789`). */
  national: string;
}

/**
 * What the customer says about the trader, for registries that compare it with their own data
 * (VIES approximate matching: REST `trader*` fields, SOAP `checkVatApprox`). Blank fields are not sent.
 */
export interface RegistryTrader {
  name?: string;
  street?: string;
  postcode?: string;
  city?: string;
  /** VIES company type; SOAP accepts only its coded form (`[A-Z]{2}-[1-9][0-9]?`, e.g. `ES-1`). */
  companyType?: string;
}

export type RegistryTraderField = keyof RegistryTrader;

/** A registry's own verdict on one trader field (VIES `VALID`, `INVALID`, `NOT_PROCESSED`; SOAP 1, 2, 3). */
export type TraderMatchCode = 'VALID' | 'INVALID' | 'NOT_PROCESSED';

/** The registry's verdicts, per trader field that was sent and that it answered. */
export type RegistryTraderMatch = Partial<Record<RegistryTraderField, TraderMatchCode>>;

export interface RegistryLookup {
  vat: RegistryVatNumber;
  /** When given, the registry is asked for a consultation number (VIES `requestIdentifier`, HMRC `consultationNumber`). */
  requester?: RegistryVatNumber;
  /** When given, sent to a registry that compares it (VIES); its verdicts come back as `traderMatch`. */
  trader?: RegistryTrader;
  /** Aborts the upstream call (deadline of the caller). */
  signal?: AbortSignal;
}

export interface RegistryAnswer {
  kind: 'answer';
  source: RegistrySource;
  valid: boolean;
  /** `null` when the registry gave none or a placeholder such as `---`. */
  name: string | null;
  address: string | null;
  /** Consultation number when a requester was given and the registry returned one. */
  consultationNumber: string | null;
  /** When the registry says it checked (its `requestDate`/`processingDate`), else when we received it. */
  checkedAt: Date;
  /**
   * The registry's verdicts on the trader fields sent: present only when the lookup sent some
   * (`lookup.trader`), with an entry for each field sent that the registry answered.
   */
  traderMatch?: RegistryTraderMatch;
}

export type UnavailableReason =
  /** Upstream concurrency/throttling limits: MS_MAX_CONCURRENT_REQ, GLOBAL_MAX_CONCURRENT_REQ, HTTP 429. Retry soon. */
  | 'throttled'
  /** The member state's or registry's service is down: MS_UNAVAILABLE, SERVICE_UNAVAILABLE, 5xx, maintenance page. */
  | 'down'
  /** No answer in time (our timeout, upstream TIMEOUT). */
  | 'timeout'
  /** The registry is not configured here (e.g. HMRC without credentials). */
  | 'not_configured'
  /** The answer could not be understood (HTML page, truncated/empty body, unexpected shape). */
  | 'bad_response'
  /** The registry refused our request for a reason that retrying will not fix (INVALID_REQUESTER_INFO, 400/403). */
  | 'rejected';

export interface RegistryUnavailable {
  kind: 'unavailable';
  source: RegistrySource;
  reason: UnavailableReason;
  /** Whether retrying the same call later may succeed. */
  retryable: boolean;
  /** Human-readable, safe to show to API clients (no secrets). */
  message: string;
  /** Upstream error code when there was one, e.g. `MS_MAX_CONCURRENT_REQ`. */
  upstreamCode?: string;
  retryAfterSeconds?: number;
}

export type RegistryResult = RegistryAnswer | RegistryUnavailable;

export interface RegistryClient {
  readonly source: RegistrySource;
  /** VAT prefixes this client answers for. */
  readonly countries: readonly string[];
  lookup(request: RegistryLookup): Promise<RegistryResult>;
}

/** Per-country availability as reported by a registry's status endpoint (VIES `check-status`). */
export interface RegistryStatus {
  available: boolean;
  /** Raw upstream availability word, e.g. `Available`, `Unavailable`, `Monitoring Disabled`. */
  upstream: string;
}

export interface RegistryStatusReader {
  /** Map of VAT prefix → status; rejects nothing: returns `null` when the status endpoint itself fails. */
  checkStatus(signal?: AbortSignal): Promise<Record<string, RegistryStatus> | null>;
}
