import type { RegistryAnswersTable } from '../../db/schema.js';
import type { Refusal } from '../../lib/refusal.js';
import type { ClaimedIdentity, IdentityMatch } from '../identity-match/index.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import type { PeppolPart } from '../peppol/index.js';
import type { AnswerSource, LazySignal } from './answers.js';
import type { FallbackMeta, SourceStatus, ValidationSource } from './sources.js';

export type { FallbackMeta, SourceStatus, ValidationSource } from './sources.js';

/** `data` of a validate response (DESIGN §2). */
export interface ValidationData {
  valid: boolean;
  /** Normalised, with prefix: `DE136695976`, `EL094259216`, `CHE116281710`. */
  vat_number: string;
  country: {
    /** ISO 3166-1 alpha-2 upper case (`GR` for an `EL` number, `XI` for Northern Ireland). */
    code: string;
    name: string;
    /** The country's VAT metadata in force today (the hosted contract's `CountryVat`). */
    vat: {
      name: string;
      abbreviation: string;
      standard_rate: number;
      reduced_rates: number[];
      super_reduced_rate: number | null;
      parking_rate: number | null;
      currency: string;
      number_format: string;
      number_pattern: string;
      updated_at: string;
    } | null;
  };
  company: { name: string | null; address: string | null } | null;
  /** The registry's consultation number when a requester was given, else null. */
  verify_id: string | null;
  verified_at: string;
  /** The identity match, when the request gave company fields (`company_name`, …); else absent. */
  match?: IdentityMatch;
  /**
   * `domestic` on a national register's answer (`source_status: "fallback"`): a domestic VAT
   * registration, not proof of registration for intra-EU supplies. Absent on the registries' answers.
   */
  registration_scope?: 'domestic';
  /** With `include=peppol`: the Peppol look-up's data, or its error alone (never changes `valid`). */
  peppol?: PeppolPart;
}

/** `meta` of a validate response besides `request_id` and `latency_ms`. */
export interface ValidationMeta {
  cached: boolean;
  source: ValidationSource;
  source_status: SourceStatus;
  /** When the stored answer was obtained; null for a live answer. */
  cached_at: string | null;
  /** Age of the stored answer in seconds; null for a live answer. */
  stale_seconds: number | null;
  /** Present when `source_status` is `fallback`. */
  fallback?: FallbackMeta;
}

/** A validation answered: the response's data and meta. */
export interface ValidationOk {
  kind: 'ok';
  data: ValidationData;
  meta: ValidationMeta;
  /** The registry's answer to store, when it was asked now (recorded with the response). */
  fresh?: RegistryAnswersTable;
}

/**
 * Why a validation is refused, named as the error code each becomes:
 * - `invalid_format`: not a possible VAT number (`details.reason`: `country`, `characters`, `length`,
 *   `checksum`), or a requester the registry refused (`details.reason: 'requester'`, VIES
 *   `INVALID_REQUESTER_INFO`): the caller's error either way;
 * - `country_unsupported`: a country this service cannot validate (`details.country`);
 * - `registry_unavailable`: the registry could not answer and no stored answer may be served
 *   (`details.source`, `retryAfterSeconds`);
 * - `rate_limited`: the caller's own limit (the test-mode number for it; `retryAfterSeconds`).
 */
export type ValidationRefusalReason =
  | 'invalid_format'
  | 'country_unsupported'
  | 'registry_unavailable'
  | 'rate_limited';

export interface ValidationRefusal extends Refusal {
  reason: ValidationRefusalReason;
}

export type ValidationOutcome = ValidationOk | ValidationRefusal;

export interface ValidationRequest {
  vatNumber: string;
  requesterVatNumber?: string | null;
  /** `false` forces a live call (`cache=false`). */
  useCache?: boolean;
  /** `background` waits behind interactive callers for a registry permit (default `interactive`). */
  priority?: 'interactive' | 'background';
  /** A client waits on an open connection: the registry work is bounded (see `AnswerQuery`). */
  clientWaiting?: boolean;
  /** What the customer claims (`company_name`, …): compared with the registered name and address. */
  claim?: ClaimedIdentity;
}

/** The one path every validation takes (single, batch items, decide's buyer and seller numbers). */
export interface ValidationPort {
  validate(
    request: ValidationRequest,
    principal: ApiKeyPrincipal,
    signal?: LazySignal,
    /** Answers from this source instead of the key mode's (monitors' test-mode sequences). */
    source?: AnswerSource,
  ): Promise<ValidationOutcome>;
}
