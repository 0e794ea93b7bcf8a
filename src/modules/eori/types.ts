import type { EoriAnswersTable } from '../../db/schema.js';
import type { EoriTrader } from '../../registries/eori-port.js';
import type { EoriService } from './countries.js';
import type { EoriFormatReason, ParsedEori } from './parse.js';

export type EoriSourceStatus = 'live' | 'cached' | 'degraded';

/** `data` of an EORI answer. */
export interface EoriData {
  valid: boolean;
  /** Canonical: `DE123456789012345`, `XI123456789000`, `GB123456789000`. */
  eori: string;
  /** The code the number carries (`GR` for Greece, also when written `EL`; `XI`; `GB`). */
  country_code: string;
  company: {
    name: string | null;
    address: {
      street: string | null;
      postal_code: string | null;
      city: string | null;
      country: string | null;
    } | null;
  } | null;
  verified_at: string;
}

/** `meta` of an EORI answer besides `request_id` and `latency_ms`. */
export interface EoriMeta {
  cached: boolean;
  source: EoriService;
  source_status: EoriSourceStatus;
  cached_at: string | null;
  stale_seconds: number | null;
}

/** What an answer source gives for one well-formed number. */
export type EoriAnswerOutcome =
  | {
      kind: 'answer';
      source: EoriService;
      sourceStatus: EoriSourceStatus;
      valid: boolean;
      trader: EoriTrader | null;
      checkedAt: Date;
      fromStore: boolean;
      /** The service's answer to store, when it was asked now. */
      fresh?: EoriAnswersTable;
    }
  | { kind: 'unavailable'; source: EoriService; message: string; retryAfterSeconds: number };

export interface EoriAnswerOptions {
  /** `false` forces a call to the service (`cache=false`). */
  useCache: boolean;
  /** Aborts when nobody waits for the answer any more; made when a service is first asked. */
  signal?: AbortSignal | (() => AbortSignal);
}

/** Live services (behind cache and resilience) or the test-mode table: the same values. */
export interface EoriAnswerSource {
  /** One outcome per distinct number asked, by canonical number. */
  answerMany(
    numbers: readonly ParsedEori[],
    options: EoriAnswerOptions,
  ): Promise<Map<string, EoriAnswerOutcome>>;
}

/** The outcome of one number, as the routes map it. */
export type EoriOutcome =
  | { kind: 'ok'; data: EoriData; meta: EoriMeta; fresh?: EoriAnswersTable }
  /** Cannot be an EORI number: 400 `invalid_format` with `details.reason`. */
  | { kind: 'invalid_format'; reason: EoriFormatReason; message: string }
  /** The service could not answer and no stored answer may be served: 502 `registry_unavailable`. */
  | { kind: 'unavailable'; source: EoriService; message: string; retryAfterSeconds: number };
