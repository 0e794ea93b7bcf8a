/**
 * What the national register clients share: transport failures and unexpected HTTP answers as
 * unavailability, the registers' wall clocks (the day a register is asked about is its own local
 * day), and the assembling of an answer and an address.
 */
import { wallDate, type ZoneWallTime, zoneWallTime, zoneWallTimeToInstant } from '../lib/dates.js';
import {
  cleanText,
  excerpt,
  type HttpFailure,
  type HttpResponse,
  looksLikeHtml,
  retryAfterSeconds,
} from './http.js';
import {
  type NationalAddress,
  type NationalAnswer,
  type NationalSource,
  type NationalUnavailable,
  nationalUnavailable,
} from './national-port.js';

/** A transport failure (no answer, refused, oversized body) as unavailability. */
export function nationalTransportFailure(
  source: NationalSource,
  label: string,
  failure: HttpFailure,
): NationalUnavailable {
  if (failure.kind === 'timeout')
    return nationalUnavailable(source, 'timeout', `${label}: ${failure.message}`);
  if (failure.kind === 'too_large')
    return nationalUnavailable(source, 'bad_response', `${label}: ${failure.message}`);
  return nationalUnavailable(source, 'down', `${label}: ${failure.message}`);
}

/** How an unexpected body is described in a message. */
export function describeBody(body: string): string {
  if (body.trim() === '') return 'an empty body';
  if (looksLikeHtml(body)) return 'an HTML page';
  return excerpt(body);
}

/**
 * An HTTP answer that carries no register answer: 429 throttled, 504 timeout, other 5xx down,
 * anything else an answer that could not be understood. `Retry-After` is kept when sensible.
 */
export function unexpectedStatus(
  source: NationalSource,
  label: string,
  outcome: HttpResponse,
  now: Date,
  upstreamCode?: string,
): NationalUnavailable {
  const extra: { upstreamCode?: string; retryAfterSeconds?: number } = {};
  if (upstreamCode !== undefined) extra.upstreamCode = upstreamCode;
  const retryAfter = retryAfterSeconds(outcome.headers, now);
  if (retryAfter !== undefined) extra.retryAfterSeconds = retryAfter;
  const status = outcome.status;
  const what = describeBody(outcome.body);
  if (status === 429)
    return nationalUnavailable(source, 'throttled', `${label} throttled the request (HTTP 429)`, extra);
  if (status === 504)
    return nationalUnavailable(source, 'timeout', `${label} gateway timed out (HTTP 504)`, extra);
  if (status >= 500)
    return nationalUnavailable(
      source,
      'down',
      `${label} is unavailable (HTTP ${status} with ${what})`,
      extra,
    );
  return nationalUnavailable(source, 'bad_response', `${label} answered HTTP ${status} with ${what}`, extra);
}

/** Registry text trimmed with runs of white space collapsed (ADIS pads names to a fixed width). */
export function squashedText(value: unknown): string | null {
  const text = cleanText(value);
  return text === null ? null : text.replace(/[ \u00a0]+/g, ' ');
}

/** An address from its parts; `null` when the register gave none. `lines` default to the parts. */
export function nationalAddress(parts: {
  street: string | null;
  postcode: string | null;
  city: string | null;
  country: string | null;
  lines?: (string | null)[];
}): NationalAddress | null {
  const place = [parts.postcode, parts.city].filter(Boolean).join(' ');
  const lines = (parts.lines ?? [parts.street, place || null]).filter(
    (line): line is string => typeof line === 'string' && line !== '',
  );
  if (lines.length === 0 && !parts.country) return null;
  return {
    text: lines.length > 0 ? lines.join('\n') : (parts.country ?? ''),
    street: parts.street,
    postcode: parts.postcode,
    city: parts.city,
    country: parts.country,
  };
}

/** An answer with the fields every register shares filled in. */
export function nationalAnswer(
  fields: Pick<NationalAnswer, 'source' | 'country' | 'national' | 'valid' | 'checkedAt'> &
    Partial<Omit<NationalAnswer, 'kind' | 'registrationScope'>>,
): NationalAnswer {
  return {
    kind: 'answer',
    source: fields.source,
    country: fields.country,
    national: fields.national,
    valid: fields.valid,
    registrationScope: 'domestic',
    registerStatus: fields.registerStatus ?? null,
    name: fields.name ?? null,
    address: fields.address ?? null,
    identifiers: fields.identifiers ?? {},
    consultationNumber: fields.consultationNumber ?? null,
    flags: fields.flags ?? [],
    registrations: fields.registrations ?? [],
    dataDate: fields.dataDate ?? null,
    checkedAt: fields.checkedAt,
  };
}

// ---------------------------------------------------------------------------------------------
// The registers' wall clocks (zone rules from the runtime's time-zone data: src/lib/dates.ts)

export { type ZoneWallTime, zoneWallTime, zoneWallTimeToInstant };

/** `YYYY-MM-DD` of an instant in a time zone: the day a register is asked about. */
export function zoneDate(timeZone: string, instant: Date | number): string {
  return wallDate(zoneWallTime(timeZone, instant));
}

/** Seconds from `now` until the next midnight in a time zone (when a daily quota resets). */
export function secondsUntilMidnight(timeZone: string, now: Date): number {
  const wall = zoneWallTime(timeZone, now);
  const nextMidnight = zoneWallTimeToInstant(timeZone, Date.UTC(wall.year, wall.month - 1, wall.day + 1));
  return Math.max(1, Math.ceil((nextMidnight - now.getTime()) / 1000));
}

/** A `YYYY-MM-DD` string, or `null` for anything else (empty strings included). */
export function isoDay(value: unknown): string | null {
  return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value.trim()) ? value.trim() : null;
}

/** `DD.MM.YYYY` (the Slovak, Slovenian and Latvian registers' dates) as `YYYY-MM-DD`, else `null`. */
export function dottedDay(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const match = /^(\d{1,2})\.(\d{1,2})\.(\d{4})$/.exec(value.trim());
  if (!match) return null;
  const [day, month, year] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return null;
  }
  return date.toISOString().slice(0, 10);
}
