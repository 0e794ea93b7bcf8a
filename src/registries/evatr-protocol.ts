/**
 * The eVatR wire protocol (`POST {baseUrl}/v1/abfrage`): the request and answer as values, the
 * request JSON, and how the fields of an answer body are read (match codes, texts, dates and times).
 */

import { berlinWallTimeToInstant } from '../lib/dates.js';
import {
  categoriseEvatrStatus,
  describeEvatrStatus,
  EVATR_STATUSES,
  type EvatrCategory,
} from './evatr-statuses.js';
import { registryText } from './http.js';

/** A = matches, B = does not match, C = not requested, D = not provided by the member state. */
export type EvatrMatchCode = 'A' | 'B' | 'C' | 'D';

export interface EvatrMatches {
  name: EvatrMatchCode;
  street: EvatrMatchCode;
  postcode: EvatrMatchCode;
  town: EvatrMatchCode;
}

export type EvatrField = keyof EvatrMatches;

export interface EvatrCompany {
  name: string | null;
  street: string | null;
  postcode: string | null;
  town: string | null;
}

export interface EvatrRequest {
  /** The requester's German VAT number, e.g. `DE123456789`. Sent as given. */
  requesterVat: string;
  /** The foreign VAT number with its country prefix, e.g. `ATU12345678`. Sent as given. */
  vat: string;
  name?: string;
  street?: string;
  postcode?: string;
  town?: string;
  signal?: AbortSignal;
}

/** The exchange as it went over the wire, kept verbatim as evidence. */
export interface EvatrRawExchange {
  url: string;
  /** The exact JSON text sent (UTF-8 on the wire). */
  requestBody: string;
  /** The response body decoded as UTF-8, unchanged. */
  responseBody: string;
  httpStatus: number;
  /** The response `Content-Type` header, if any. */
  contentType: string | null;
}

export interface EvatrAnswer {
  kind: 'answer';
  /** Upstream status as sent, e.g. `evatr-0000`. */
  status: string;
  category: EvatrCategory;
  /** Whether the status is in the official list. */
  known: boolean;
  /** English description of the status. */
  description: string;
  httpStatus: number;
  /** The authority's technical request id, when it sent one. */
  id: string | null;
  /** Our match codes: the upstream code for each supplied field, `C` for fields not supplied. */
  matches: EvatrMatches;
  /** The `erg*` values exactly as returned (null when absent). */
  upstreamMatches: {
    name: string | null;
    street: string | null;
    postcode: string | null;
    town: string | null;
  };
  /** `gueltigAb` as `YYYY-MM-DD`. */
  validFrom: string | null;
  /** `gueltigBis` as `YYYY-MM-DD`. */
  validTo: string | null;
  /** `anfrageZeitpunkt` normalised to ISO-8601 UTC with milliseconds; our clock when absent or unreadable. */
  answeredAt: string;
  /** `anfrageZeitpunkt` exactly as sent. */
  upstreamTimestamp: string | null;
  /** Company data, if the response carried any (the REST API normally does not). */
  company: EvatrCompany;
  raw: EvatrRawExchange;
}

/** `circuit_open`: not sent, because the authority failed repeatedly (see `evatr-guard.ts`). */
export type EvatrFailureReason = 'network' | 'timeout' | 'bad_response' | 'circuit_open';

export interface EvatrFailure {
  kind: 'failure';
  reason: EvatrFailureReason;
  message: string;
  /** With `circuit_open`: seconds until the next call is tried. */
  retryAfterSeconds?: number;
  raw: {
    url: string;
    requestBody: string;
    responseBody: string | null;
    httpStatus: number | null;
    contentType: string | null;
  };
}

export type EvatrResult = EvatrAnswer | EvatrFailure;

const FIELDS: readonly { field: EvatrField; request: string; result: string }[] = [
  { field: 'name', request: 'firmenname', result: 'ergFirmenname' },
  { field: 'street', request: 'strasse', result: 'ergStrasse' },
  { field: 'postcode', request: 'plz', result: 'ergPlz' },
  { field: 'town', request: 'ort', result: 'ergOrt' },
];

function supplied(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

/** Builds the request JSON: mandatory numbers first, empty optional fields omitted. */
export function buildEvatrRequestBody(request: EvatrRequest): string {
  const body: Record<string, string> = {
    anfragendeUstid: request.requesterVat,
    angefragteUstid: request.vat,
  };
  if (supplied(request.name)) body.firmenname = request.name;
  if (supplied(request.town)) body.ort = request.town;
  if (supplied(request.postcode)) body.plz = request.postcode;
  if (supplied(request.street)) body.strasse = request.street;
  return JSON.stringify(body);
}

type AnswerBody = Record<string, unknown>;

/**
 * Reads what the authority sent back: an `answer` whenever the body carries a status, whatever the
 * HTTP code; a `bad_response` failure for a body that is not a JSON object or has no status.
 * `now` gives `answeredAt` when the body has no readable `anfrageZeitpunkt`.
 */
export function readEvatrAnswer(
  request: EvatrRequest,
  raw: EvatrRawExchange,
  now: () => Date,
): EvatrAnswer | EvatrFailure {
  const parsed = parseJsonObject(raw.responseBody);
  if (parsed === null) {
    const what = raw.responseBody.trim() === '' ? 'an empty body' : 'a body that is not a JSON object';
    return badResponse(raw, `eVatR answered HTTP ${raw.httpStatus} with ${what}`);
  }
  const code = parsed.status;
  if (typeof code !== 'string' || code.trim() === '') {
    return badResponse(raw, `eVatR answered HTTP ${raw.httpStatus} without a status`);
  }
  return answerOf(request, parsed, code, raw, now);
}

function badResponse(raw: EvatrRawExchange, message: string): EvatrFailure {
  return { kind: 'failure', reason: 'bad_response', message, raw };
}

/** The answer a body with status `code` gives. */
function answerOf(
  request: EvatrRequest,
  parsed: AnswerBody,
  code: string,
  raw: EvatrRawExchange,
  now: () => Date,
): EvatrAnswer {
  const upstreamMatches = upstreamMatchesOf(parsed);
  const { matches, allSuppliedFieldsMatch } = matchesFor(request, upstreamMatches);
  const upstreamTimestamp = stringOrNull(parsed.anfrageZeitpunkt);
  return {
    kind: 'answer',
    status: code,
    category: categoriseEvatrStatus(code, { allSuppliedFieldsMatch }),
    known: Object.hasOwn(EVATR_STATUSES, code),
    description: describeEvatrStatus(code),
    httpStatus: raw.httpStatus,
    id: nonEmptyStringOrNull(parsed.id),
    matches,
    upstreamMatches,
    validFrom: parseEvatrDate(parsed.gueltigAb),
    validTo: parseEvatrDate(parsed.gueltigBis),
    answeredAt: normaliseEvatrTimestamp(upstreamTimestamp) ?? now().toISOString(),
    upstreamTimestamp,
    company: companyOf(parsed),
    raw,
  };
}

/** The `erg*` values exactly as returned. */
function upstreamMatchesOf(parsed: AnswerBody): EvatrAnswer['upstreamMatches'] {
  return {
    name: stringOrNull(parsed.ergFirmenname),
    street: stringOrNull(parsed.ergStrasse),
    postcode: stringOrNull(parsed.ergPlz),
    town: stringOrNull(parsed.ergOrt),
  };
}

/** Our match code per field, and whether at least one field was supplied and every supplied one is `A`. */
function matchesFor(
  request: EvatrRequest,
  upstreamMatches: EvatrAnswer['upstreamMatches'],
): { matches: EvatrMatches; allSuppliedFieldsMatch: boolean } {
  const matches = {} as EvatrMatches;
  const suppliedFields: EvatrField[] = [];
  for (const { field } of FIELDS) {
    const isSupplied = supplied(request[field]);
    if (isSupplied) suppliedFields.push(field);
    matches[field] = toMatchCode(isSupplied, upstreamMatches[field]);
  }
  const allSuppliedFieldsMatch = suppliedFields.length > 0 && suppliedFields.every((f) => matches[f] === 'A');
  return { matches, allSuppliedFieldsMatch };
}

function companyOf(parsed: AnswerBody): EvatrCompany {
  return {
    name: nonEmptyStringOrNull(parsed.firmenname),
    street: nonEmptyStringOrNull(parsed.strasse),
    postcode: nonEmptyStringOrNull(parsed.plz),
    town: nonEmptyStringOrNull(parsed.ort),
  };
}

/**
 * Our match code for one field. Not supplied → `C`. Supplied → the upstream letter; `C` when the
 * authority returned none for it (it did not compare the field, e.g. a simple check), `D` for a
 * letter outside A–D (the authority did not confirm the field). Neither counts as a match.
 */
function toMatchCode(isSupplied: boolean, upstream: string | null): EvatrMatchCode {
  if (!isSupplied) return 'C';
  if (upstream === null) return 'C';
  const letter = upstream.trim().toUpperCase();
  if (letter === 'A' || letter === 'B' || letter === 'C' || letter === 'D') return letter;
  return 'D';
}

function parseJsonObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
    return null;
  } catch {
    return null;
  }
}

/** The authority's text, made safe to store and show (`registryText`); the raw exchange keeps it as sent. */
function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? registryText(value) : null;
}

function nonEmptyStringOrNull(value: unknown): string | null {
  const text = stringOrNull(value);
  return text !== null && text.trim() !== '' ? text : null;
}

// ---------------------------------------------------------------------------------------------
// Date and time formats
// ---------------------------------------------------------------------------------------------

const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * Normalises an upstream timestamp to ISO-8601 UTC with milliseconds. Accepts any number of
 * fractional digits (the service sends nanoseconds) and `Z`/`±HH:MM`/`±HHMM`/`±HH` offsets; a time
 * without an offset is German local time. Fractions are truncated to milliseconds.
 * Returns null for anything else.
 */
export function normaliseEvatrTimestamp(value: string | null | undefined): string | null {
  if (typeof value !== 'string') return null;
  const m = TIMESTAMP.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, s = '00', fraction = '', zone] = m;
  const ms = Number(fraction.slice(0, 3).padEnd(3, '0'));
  const wall = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  if (!isValidCalendarDate(Number(y), Number(mo), Number(d)) || Number(h) > 23 || Number(mi) > 59)
    return null;
  if (Number(s) > 59) return null;
  let instantMs: number;
  if (zone === undefined) {
    instantMs = berlinWallTimeToInstant(wall);
  } else if (zone.toUpperCase() === 'Z') {
    instantMs = wall;
  } else {
    const digits = zone.slice(1).replace(':', '');
    const hours = Number(digits.slice(0, 2));
    const minutes = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    instantMs = wall - (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes) * 60_000;
  }
  const instant = new Date(instantMs);
  return Number.isNaN(instant.getTime()) ? null : instant.toISOString();
}

/**
 * Parses `gueltigAb`/`gueltigBis` to `YYYY-MM-DD`. Both formats seen for the service are accepted:
 * ISO (`2025-01-31`, optionally followed by a time) and German (`31.01.2025`). Returns null otherwise.
 */
export function parseEvatrDate(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  let y: number;
  let m: number;
  let d: number;
  const iso = /^(\d{4})-(\d{2})-(\d{2})(?:$|[T ])/.exec(text);
  const german = /^(\d{1,2})\.(\d{1,2})\.(\d{4})$/.exec(text);
  if (iso) {
    [y, m, d] = [Number(iso[1]), Number(iso[2]), Number(iso[3])];
  } else if (german) {
    [y, m, d] = [Number(german[3]), Number(german[2]), Number(german[1])];
  } else {
    return null;
  }
  if (!isValidCalendarDate(y, m, d)) return null;
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

function isValidCalendarDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}
