import type { RegistryAnswersTable } from '../../db/schema.js';
import type { NationalSource } from '../../registries/national-port.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import type { AnswerSource, LazySignal } from './answers.js';

/** The registries that answer: the four asked first, and the national registers asked when VIES fails. */
export type ValidationSource = 'vies' | 'hmrc' | 'bfs' | 'brreg' | NationalSource;
/** `fallback`: VIES could not answer and the member state's own register did. */
export type SourceStatus = 'live' | 'cached' | 'degraded' | 'fallback';

/**
 * `meta.fallback` of an answer a national register gave because VIES could not: why VIES did not
 * answer, and the register's own answer as audit records and proofs keep it.
 */
export interface FallbackMeta {
  /** The VIES error: its code (`MS_UNAVAILABLE`, `MS_MAX_CONCURRENT_REQ`, `TIMEOUT`) or `timeout`, `down`, `throttled`, `circuit_open`, `busy`. */
  reason: string;
  /** VIES's failure in words. */
  message: string;
  /** When the register answered. */
  checked_at: string;
  /** The date of the published file answered from (SI, LV), else null. */
  data_date: string | null;
  /** The register's own word for the status (`Czynny`, `NE`, `scpTVA=true`), or null when it does not list the number. */
  register_status: string | null;
  /** The register's proof of this consultation (PL `requestId`), else null. */
  consultation_number: string | null;
  /** The register's identifiers of the answer and the payer (`requestId`, `regon`, `dic`, `cui`, `businessId`, …). */
  identifiers: Record<string, string>;
  /** Facts the register publishes about the payer (`unreliable_payer`, `inactive_taxpayer`). */
  flags: { code: string; since: string | null; register_value: string }[];
}

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
  /**
   * `domestic` on a national register's answer (`source_status: "fallback"`): a domestic VAT
   * registration, not proof of registration for intra-EU supplies. Absent on the registries' answers.
   */
  registration_scope?: 'domestic';
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

export type ValidationOutcome =
  | {
      kind: 'ok';
      data: ValidationData;
      meta: ValidationMeta;
      /** The registry's answer to store, when it was asked now (recorded with the response). */
      fresh?: RegistryAnswersTable;
    }
  /** Not a possible VAT number: 400 `invalid_format` with `details.reason`. */
  | { kind: 'invalid_format'; reason: 'country' | 'characters' | 'length' | 'checksum'; message: string }
  /** A country this service cannot validate: 400 `country_unsupported`. */
  | { kind: 'country_unsupported'; country: string; message: string }
  /** The registry could not answer and no stored answer may be served: 502 `registry_unavailable`. */
  | { kind: 'unavailable'; source: ValidationSource; message: string; retryAfterSeconds: number }
  /** The registry refused the requester's VAT number (VIES `INVALID_REQUESTER_INFO`): the caller's error. */
  | { kind: 'requester_rejected'; source: ValidationSource; message: string }
  /** The caller's own limit was hit (test-mode magic number for it): 429 `rate_limited`. */
  | { kind: 'rate_limited'; message: string; retryAfterSeconds: number };

export interface ValidationRequest {
  vatNumber: string;
  requesterVatNumber?: string | null;
  /** `false` forces a live call (`cache=false`). */
  useCache?: boolean;
  /** `background` waits behind interactive callers for a registry permit (default `interactive`). */
  priority?: 'interactive' | 'background';
  /** A client waits on an open connection: the registry work is bounded (see `AnswerQuery`). */
  clientWaiting?: boolean;
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
