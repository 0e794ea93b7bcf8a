import type { NationalSource } from '../../lib/national-sources.js';

/** The registries that answer: the four asked first, and the national registers asked when VIES fails. */
export type ValidationSource = 'vies' | 'hmrc' | 'bfs' | 'brreg' | NationalSource;
/**
 * How a registry answered: asked now, a stored answer, a stale one served while it is down, or
 * (`fallback`) VIES could not answer and the member state's own register did.
 */
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
