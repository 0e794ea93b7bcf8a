/**
 * The Peppol SMP (Service Metadata Publisher) client: which document types a participant has
 * metadata for, and its Peppol Directory business card where its SMP publishes one.
 *
 * - `GET {smp}/iso6523-actorid-upis%3A%3A{ICD:value}`: the ServiceGroup, whose
 *   ServiceMetadataReference hrefs end in `/services/{document type}` (Peppol SMP 1.x; read in
 *   peppol-smp-xml.ts). Identifiers are percent-encoded in the path, as phax/peppol-commons'
 *   SMP client sends them. Some SMPs answer 200 for any document type asked directly
 *   (phax/phase4#351), so this list is what counts.
 * - `GET {smp}/businesscard/iso6523-actorid-upis%3A%3A{ICD:value}`: the business card
 *   (phax/phoss-directory); 404 when the SMP publishes none, or none for this participant.
 *
 * The SMP's address comes from DNS, so it is not trusted: before any request the guard port says
 * whether the URL may be called (https, a public address); a refusal makes no request. Answers are
 * read under a size cap (a larger body is cut off unread) and parsed without entity expansion.
 * Redirects are not followed: a 3xx is an answer that is not a ServiceGroup. Every outcome is a
 * value, never a throw; an SMP that fails never makes a participant "not registered" (that is
 * the SML's word alone).
 */
import {
  DEFAULT_MAX_BODY_BYTES,
  excerpt,
  type FetchFn,
  type HttpOutcome,
  isRetryable,
  joinUrl,
  looksLikeHtml,
  retryAfterSeconds,
  type Transport,
  transportFor,
} from './http.js';
import { type BusinessCardDocument, readBusinessCard, readServiceGroup, readXml } from './peppol-smp-xml.js';
import type { UnavailableReason } from './port.js';

/** The port deciding whether an SMP URL may be called (the service gives the SSRF guard of webhooks). */
export interface SmpUrlGuard {
  isAllowed(url: string): Promise<{ allowed: true } | { allowed: false; reason: string }>;
}

export interface SmpUnavailable {
  kind: 'unavailable';
  reason: UnavailableReason;
  retryable: boolean;
  message: string;
  /** The HTTP status when the SMP answered one. */
  status?: number;
  retryAfterSeconds?: number;
}

export interface SmpRefused {
  kind: 'refused';
  /** Why the guard refused the URL; no request was made. */
  reason: string;
}

export type ServiceGroupResult =
  | {
      kind: 'service_group';
      /** Document type identifiers `scheme::value`, e.g. `busdox-docid-qns::urn:oasis:…::2.1`. */
      documentTypes: string[];
      shape: 'busdox' | 'bdxr1' | 'bdxr2';
      /** References whose document type could not be read. */
      unreadable: number;
    }
  /** The SMP does not know the participant (404). */
  | { kind: 'not_found'; message: string }
  | SmpRefused
  | SmpUnavailable;

export type BusinessCardResult =
  | ({ kind: 'business_card' } & Omit<BusinessCardDocument, 'participant'>)
  /** No business card published (404). */
  | { kind: 'none' }
  | SmpRefused
  | SmpUnavailable;

export interface SmpClientOptions {
  guard: SmpUrlGuard;
  /** Per request. */
  timeoutMs: number;
  /** ServiceGroups larger than this are refused unread (default 1 MiB; the largest real ones are a few kB). */
  maxServiceGroupBytes?: number;
  /** Business cards larger than this are refused unread (default 256 KiB). */
  maxBusinessCardBytes?: number;
  transport?: Transport;
  fetch?: FetchFn;
  now?: () => Date;
}

export interface SmpClient {
  /** `participantId` is `ICD:value` as the peppol module writes it. Never throws. */
  serviceGroup(smpUrl: string, participantId: string, signal?: AbortSignal): Promise<ServiceGroupResult>;
  businessCard(smpUrl: string, participantId: string, signal?: AbortSignal): Promise<BusinessCardResult>;
}

export const PARTICIPANT_SCHEME = 'iso6523-actorid-upis';

/** The path segment of a participant: `iso6523-actorid-upis%3A%3A0208%3A0677424046`. */
export function participantPath(participantId: string): string {
  return encodeURIComponent(`${PARTICIPANT_SCHEME}::${participantId}`);
}

function unavailable(
  reason: UnavailableReason,
  message: string,
  extra: Partial<SmpUnavailable> = {},
): SmpUnavailable {
  return { kind: 'unavailable', reason, retryable: isRetryable(reason), message, ...extra };
}

function transportFailure(what: string, outcome: Extract<HttpOutcome, { ok: false }>): SmpUnavailable {
  if (outcome.kind === 'timeout') return unavailable('timeout', `${what}: ${outcome.message}`);
  if (outcome.kind === 'too_large') return unavailable('bad_response', `${what}: ${outcome.message}`);
  return unavailable('down', `${what}: ${outcome.message}`);
}

/** What a status other than 200 and 404 means. */
function statusFailure(
  what: string,
  status: number,
  body: string,
  retryAfter: number | undefined,
): SmpUnavailable {
  const page = looksLikeHtml(body) ? 'an HTML page' : excerpt(body);
  const extra = { status, ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}) };
  if (status === 429) return unavailable('throttled', `${what} throttled the request (HTTP 429)`, extra);
  if (status === 504) return unavailable('timeout', `${what} timed out (HTTP 504)`, extra);
  if (status >= 500) return unavailable('down', `${what} answered HTTP ${status} with ${page}`, extra);
  if (status >= 300 && status < 400) {
    return unavailable(
      'bad_response',
      `${what} answered a redirect (HTTP ${status}), which is not followed`,
      extra,
    );
  }
  return unavailable('rejected', `${what} answered HTTP ${status} with ${page}`, extra);
}

const sameParticipant = (written: string | null, participantId: string) =>
  written === null || written.toLowerCase() === `${PARTICIPANT_SCHEME}::${participantId}`.toLowerCase();

export function createSmpClient(options: SmpClientOptions): SmpClient {
  const send = options.transport ?? transportFor(options.fetch);
  const now = options.now ?? (() => new Date());

  /** Guards the URL, then GETs it; a refusal or a transport failure as a result. */
  async function get(url: string, what: string, maxBodyBytes: number, signal?: AbortSignal) {
    const verdict = await options.guard.isAllowed(url);
    if (!verdict.allowed) return { kind: 'refused', reason: verdict.reason } satisfies SmpRefused;
    const outcome = await send({
      url,
      method: 'GET',
      headers: { accept: 'application/xml, text/xml;q=0.9' },
      timeoutMs: options.timeoutMs,
      maxBodyBytes,
      ...(signal ? { signal } : {}),
    });
    if (!outcome.ok) return transportFailure(what, outcome);
    return outcome;
  }

  async function serviceGroup(
    smpUrl: string,
    participantId: string,
    signal?: AbortSignal,
  ): Promise<ServiceGroupResult> {
    const what = `the SMP ${smpUrl}`;
    const answer = await get(
      joinUrl(smpUrl, `/${participantPath(participantId)}`),
      what,
      options.maxServiceGroupBytes ?? DEFAULT_MAX_BODY_BYTES,
      signal,
    );
    if (!('ok' in answer)) return answer;
    const { status, body } = answer;
    if (status === 404)
      return { kind: 'not_found', message: `${what} does not know ${participantId}: ${excerpt(body)}` };
    if (status !== 200) return statusFailure(what, status, body, retryAfterSeconds(answer.headers, now()));
    const xml = readXml(body);
    if (!xml.ok) return unavailable('bad_response', `${what} answered 200 with ${xml.message}`, { status });
    const document = readServiceGroup(xml.root);
    if (!document) {
      return unavailable(
        'bad_response',
        `${what} answered 200 with a ${xml.root.local} instead of a ServiceGroup`,
        {
          status,
        },
      );
    }
    if (!sameParticipant(document.participant, participantId)) {
      return unavailable(
        'bad_response',
        `${what} answered the ServiceGroup of ${String(document.participant).slice(0, 150)} instead of ${participantId}`,
        { status },
      );
    }
    return {
      kind: 'service_group',
      documentTypes: document.documentTypes,
      shape: document.shape,
      unreadable: document.unreadable,
    };
  }

  async function businessCard(
    smpUrl: string,
    participantId: string,
    signal?: AbortSignal,
  ): Promise<BusinessCardResult> {
    const what = `the business card at ${smpUrl}`;
    const answer = await get(
      joinUrl(smpUrl, `/businesscard/${participantPath(participantId)}`),
      what,
      options.maxBusinessCardBytes ?? 256 * 1024,
      signal,
    );
    if (!('ok' in answer)) return answer;
    const { status, body } = answer;
    if (status === 404) return { kind: 'none' };
    if (status !== 200) return statusFailure(what, status, body, retryAfterSeconds(answer.headers, now()));
    const xml = readXml(body);
    if (!xml.ok) return unavailable('bad_response', `${what} answered 200 with ${xml.message}`, { status });
    const card = readBusinessCard(xml.root);
    if (!card) {
      return unavailable(
        'bad_response',
        `${what} answered 200 with a ${xml.root.local} instead of a BusinessCard`,
        {
          status,
        },
      );
    }
    if (!sameParticipant(card.participant, participantId)) {
      return unavailable('bad_response', `${what} is the card of another participant`, { status });
    }
    return { kind: 'business_card', name: card.name, countryCode: card.countryCode, entities: card.entities };
  }

  return { serviceGroup, businessCard };
}
