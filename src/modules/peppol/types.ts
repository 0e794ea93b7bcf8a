import type { ApiKeyPrincipal } from '../keys/index.js';

/**
 * What openvat could learn from a participant's SMP: `ok` (its ServiceGroup was read), `not_found`
 * (it answered 404 for the participant), `unavailable` (it failed: an error page, garbage, a bomb,
 * too much, nothing in time), `refused` (its address is not a public https one: no request made),
 * `no_smp` (the SML's record gives no usable SMP address). Null when not registered.
 */
export type SmpStatus = 'ok' | 'not_found' | 'unavailable' | 'refused' | 'no_smp';

/** A participant's part of the answer as stored (document types as identifiers only). */
export interface StoredParticipant {
  /** `ICD:value`, the value in lower case. */
  id: string;
  icd: string;
  registered: boolean;
  smp_url: string | null;
  smp_status: SmpStatus | null;
  document_types: string[] | null;
  business_card: { name: string; country_code: string | null } | null;
}

export interface PeppolDocumentType {
  id: string;
  /** The code list's name, or null for a document type it does not list. */
  name: string | null;
  /** An invoice of Peppol BIS Billing 3.0, of another CIUS of EN 16931 (XRechnung…) or of EN 16931. */
  invoice: boolean;
}

export interface PeppolParticipant {
  id: string;
  icd: string;
  scheme_name: string;
  /** Null when the SML could not be asked for it (`sml_status: "unavailable"`). */
  registered: boolean | null;
  /** `ok`: the SML answered (now or stored); `unavailable`: it could not be asked, nothing is stored. */
  sml_status: 'ok' | 'unavailable';
  /** Why the SML could not be asked; null otherwise. */
  sml_error: string | null;
  smp_url: string | null;
  smp_status: SmpStatus | null;
  document_types: PeppolDocumentType[] | null;
  business_card: { name: string; country_code: string | null } | null;
}

/** `data` of `GET /v1/peppol/{identifier}`. */
export interface PeppolData {
  /** The identifier as looked up: the normalised VAT number or `iso6523-actorid-upis::ICD:value`. */
  identifier: string;
  reachable: boolean;
  can_receive_invoices: boolean | null;
  participants: PeppolParticipant[];
  checked_at: string;
}

export interface PeppolMeta {
  cached: boolean;
  source: 'peppol';
  source_status: 'live' | 'cached' | 'degraded';
  cached_at: string | null;
  stale_seconds: number | null;
}

export type PeppolOutcome =
  | { kind: 'ok'; data: PeppolData; meta: PeppolMeta }
  /** Not a VAT number nor a participant identifier: 400 `invalid_format`. */
  | { kind: 'invalid_format'; reason: string; message: string }
  | { kind: 'country_unsupported'; country: string; message: string }
  /** The SML could not be asked and nothing is stored: 502 `registry_unavailable`. */
  | { kind: 'unavailable'; message: string; retryAfterSeconds: number };

export interface PeppolRequest {
  identifier: string;
  /** `false` asks the SML and SMPs again (`cache=false`). */
  useCache?: boolean;
  signal?: AbortSignal;
}

/** What `GET /v1/status` tells of the Peppol SML, as this instance last saw it. */
export interface PeppolStatus {
  sml_zone: string;
  last_success_at: string | null;
  last_failure_at: string | null;
  last_failure: string | null;
  /** The SML's breaker (shared by the instances through Redis when configured). */
  sml_breaker: 'closed' | 'open' | 'half_open';
  sml_retry_after_seconds: number | null;
  /** The SMP hosts whose breaker is not closed now. */
  smp_breakers: Array<{
    host: string;
    breaker: 'open' | 'half_open';
    retry_after_seconds: number | null;
    last_failure_at: string | null;
  }>;
}

/** The one path every Peppol look-up takes (the route, and validate's `include=peppol`). */
export interface PeppolPort {
  lookup(request: PeppolRequest, principal: Pick<ApiKeyPrincipal, 'mode'>): Promise<PeppolOutcome>;
}
