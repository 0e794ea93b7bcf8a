/** The shape of a proof: what was asked, what the authority answered, when, and the evidence. */
import type { Refusal } from '../../lib/refusal.js';
import type { TimestampToken } from './timestamps.js';

export type ProofLanguage = 'de' | 'en';
export type MatchCode = 'A' | 'B' | 'C' | 'D';

export interface ProofData {
  /** `confirmation`: a qualified confirmation (eVatR); `validation`: a validation's audit record. */
  kind: 'confirmation' | 'validation';
  /** The confirmation's id, or the audit record's `request_id`. */
  id: string;
  /** The `meta.request_id` of the original response. */
  request_id: string;
  mode: 'live' | 'test';
  language: ProofLanguage;
  generated_at: string;
  asked: {
    requester_vat_number: string | null;
    vat_number: string;
    /** The company details sent for comparison (null where a field was not sent); null for a validation. */
    company: {
      name: string | null;
      street: string | null;
      postcode: string | null;
      town: string | null;
    } | null;
  };
  answer: {
    /** `taxauth` (eVatR of the Federal Central Tax Office), `vies`, `hmrc`, `bfs` or `brreg`. */
    source: string;
    status_code: string | null;
    /** The meaning of `status_code` (the authority's official German text, or its English translation). */
    status_text: string | null;
    valid: boolean | null;
    qualified: boolean | null;
    matches: {
      name: MatchCode | null;
      street: MatchCode | null;
      postcode: MatchCode | null;
      town: MatchCode | null;
    } | null;
    company: {
      name: string | null;
      street: string | null;
      postcode: string | null;
      town: string | null;
      address: string | null;
    } | null;
    valid_from: string | null;
    valid_to: string | null;
    /** The authority's own request id (eVatR `id`). */
    taxauth_id: string | null;
    /** The registry's consultation number (VIES `requestIdentifier`). */
    consultation_number: string | null;
    /** The authority's own time of the request, exactly as it sent it (eVatR `anfrageZeitpunkt`). */
    authority_time: string | null;
    /** A national register's answer given because VIES could not answer; null otherwise. */
    register: RegisterAnswer | null;
  };
  times: {
    /** When openvat received the request (the time in its UUID v7 request id). */
    received_at: string | null;
    /** When the authority answered. */
    answered_at: string | null;
    /** When the record was stored. */
    stored_at: string;
    /** Kept at least until then. */
    kept_until: string;
  };
  record: {
    algorithm: 'sha256';
    /** A confirmation: its chain hash. An audit record: SHA-256 of the stored response, byte for byte. */
    hash: string;
    /** Whether the hash was computed again from the stored record and matched; null for an audit record. */
    hash_matches: boolean | null;
  };
  /** The record's place in the evidence chain; null for an audit record (not in the chain). */
  chain: { seq: number; prev_hash: string } | null;
  /** The newest chain head, which covers the record, with its Ed25519 signature (null when unsigned). */
  signed_head: {
    seq: number;
    hash: string;
    signature: string | null;
    signature_valid: boolean | null;
    public_key: string | null;
  } | null;
  /** The newest trusted time-stamp token covering the record, or null when none does yet. */
  timestamp: TimestampToken | null;
  /** How to verify, step by step, in the proof's language. */
  verification: string[];
}

/** What a national register answered for VIES (`meta.fallback` of the audited response). */
export interface RegisterAnswer {
  source_status: 'fallback';
  /** A domestic VAT registration: not proof of registration for intra-EU supplies. */
  registration_scope: 'domestic';
  /** Why VIES did not answer (`MS_UNAVAILABLE`, `timeout`, …). */
  reason: string | null;
  /** The register's own word for the status (`Czynny`, `NE`), or null. */
  register_status: string | null;
  /** The date of the published file answered from (SI, LV), else null. */
  data_date: string | null;
  checked_at: string | null;
  /** The register's identifiers of the answer and the payer (`requestId`, `regon`, `dic`, …). */
  identifiers: Record<string, string>;
  /** Facts the register publishes about the payer (`unreliable_payer`, …). */
  flags: { code: string; since: string | null; register_value: string | null }[];
}

export type ProofOutcome = { kind: 'ok'; proof: ProofData } | Refusal;

/** What the caller asked for: `?lang=` and the `Accept-Language` header. */
export interface LanguagePreference {
  lang?: string | undefined;
  acceptLanguage?: string | undefined;
}
