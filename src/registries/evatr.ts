/**
 * Client for the German federal tax authority's (BZSt) eVatR REST API: the qualified confirmation of a
 * foreign EU VAT number under §18e UStG (`POST {baseUrl}/v1/abfrage`).
 *
 * Expected outcomes are values. Every body that carries an `evatr-XXXX` status is an `answer`,
 * whatever its HTTP code (the service sends invalid numbers with 200 and a valid number with 400);
 * network errors, timeouts and bodies without a status are a `failure`. One attempt per call: the
 * authority asks callers not to repeat a request immediately, so retrying is the caller's decision.
 */

import { berlinWallTimeToInstant } from '../lib/dates.js';
import { registryText, type Transport, transportFor } from './http.js';

/** How our service treats an upstream status (DESIGN, "Qualified confirmation"). */
export type EvatrCategory =
  | 'qualified'
  | 'valid_not_qualified'
  | 'invalid'
  | 'caller_error'
  | 'requester_refused'
  | 'session_limit'
  | 'unavailable';

/**
 * The category of a status code on its own. `valid` (only `evatr-0000`) becomes `qualified` or
 * `valid_not_qualified` once the match codes are known.
 */
export type EvatrStatusCategory = 'valid' | Exclude<EvatrCategory, 'qualified'>;

export interface EvatrStatusInfo {
  code: string;
  /** Upstream `kategorie`. */
  kind: 'Ergebnis' | 'Hinweis' | 'Fehler';
  /** `httpcode` of the official status list; `null` where the list gives none (`evatr-0001`). */
  httpStatus: number | null;
  /** Upstream `feld`: the request field the status refers to. */
  field: string | null;
  /** Official German text (`meldung`). */
  german: string;
  /** English description (unofficial translation), for error messages. */
  english: string;
  category: EvatrStatusCategory;
}

const TRY_LATER_DE =
  'Eine Bearbeitung Ihrer Anfrage ist zurzeit nicht möglich. Bitte versuchen Sie es später noch einmal.';
const TRY_LATER_EN = 'The authority cannot process the request at the moment; try again later.';

function status(
  code: string,
  kind: EvatrStatusInfo['kind'],
  httpStatus: number | null,
  field: string | null,
  category: EvatrStatusCategory,
  german: string,
  english: string,
): EvatrStatusInfo {
  return { code, kind, httpStatus, field, german, english, category };
}

/**
 * The complete official status list (`GET /v1/info/statusmeldungen`), with our category for each code.
 * `evatr-0001` belongs to the authority's web form and is not in the mapping table, so it is treated
 * like an unknown code: unavailable.
 */
export const EVATR_STATUSES: Readonly<Record<string, EvatrStatusInfo>> = Object.freeze(
  Object.fromEntries(
    [
      status(
        'evatr-0000',
        'Ergebnis',
        200,
        null,
        'valid',
        'Die angefragte USt-IdNr. ist zum Anfragezeitpunkt gültig.',
        'The requested VAT number is valid at the time of the request.',
      ),
      status(
        'evatr-0001',
        'Hinweis',
        null,
        'datenschutz',
        'unavailable',
        'Bitte bestätigen Sie den Datenschutzhinweis.',
        'Please confirm the privacy notice.',
      ),
      status(
        'evatr-0002',
        'Hinweis',
        400,
        'angefragteUstid',
        'caller_error',
        'Mindestens eins der Pflichtfelder ist nicht besetzt.',
        'At least one mandatory field is missing.',
      ),
      status(
        'evatr-0003',
        'Hinweis',
        400,
        'firmenname,ort',
        'valid_not_qualified',
        'Die angefragte USt-IdNr. ist zum Anfragezeitpunkt gültig. Mindestens eines der Pflichtfelder für eine qualifizierte Bestätigungsanfrage ist nicht besetzt.',
        'The requested VAT number is valid, but a mandatory field for a qualified confirmation (company name or town) is missing, so only a simple check was made.',
      ),
      status(
        'evatr-0004',
        'Fehler',
        400,
        'anfragendeUstid',
        'requester_refused',
        'Die anfragende DE USt-IdNr. ist syntaktisch falsch. Sie passt nicht in das deutsche Erzeugungsschema.',
        'The requesting German VAT number is syntactically wrong (it does not fit the German scheme, check digit included).',
      ),
      status(
        'evatr-0005',
        'Fehler',
        400,
        'angefragteUstid',
        'caller_error',
        'Die angegebene angefragte USt-IdNr. ist syntaktisch falsch.',
        'The requested VAT number is syntactically wrong.',
      ),
      status(
        'evatr-0006',
        'Hinweis',
        403,
        'anfragendeUstid',
        'requester_refused',
        'Die anfragende DE USt-IdNr. ist nicht berechtigt eine DE USt-IdNr. anzufragen.',
        'The requesting German VAT number may not query a German VAT number.',
      ),
      status('evatr-0007', 'Hinweis', 403, null, 'caller_error', 'Fehlerhafter Aufruf.', 'Faulty call.'),
      status(
        'evatr-0008',
        'Hinweis',
        403,
        null,
        'session_limit',
        'Die maximale Anzahl von qualifizierten Bestätigungsabfragen für diese Session wurde erreicht. Bitte starten Sie erneut mit einer einfachen Bestätigungsabfrage.',
        'The maximum number of qualified confirmation requests for this session has been reached; start again with a simple request.',
      ),
      status('evatr-0011', 'Fehler', 503, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
      status(
        'evatr-0012',
        'Fehler',
        400,
        'angefragteUstid',
        'caller_error',
        'Die angefragte USt-IdNr. ist syntaktisch falsch. Sie passt nicht in das Erzeugungsschema.',
        "The requested VAT number does not fit its country's number scheme.",
      ),
      status('evatr-0013', 'Fehler', 503, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
      status('evatr-1001', 'Fehler', 503, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
      status('evatr-1002', 'Fehler', 500, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
      status('evatr-1003', 'Fehler', 500, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
      status('evatr-1004', 'Fehler', 500, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
      status(
        'evatr-2001',
        'Hinweis',
        404,
        'angefragteUstid',
        'invalid',
        'Die angefragte USt-IdNr. ist zum Anfragezeitpunkt nicht vergeben.',
        'The requested VAT number is not assigned at the time of the request.',
      ),
      status(
        'evatr-2002',
        'Hinweis',
        200,
        'angefragteUstid',
        'invalid',
        'Die angefragte USt-IdNr. ist zum Anfragezeitpunkt nicht gültig. Sie ist erst gültig ab dem Datum im Feld gueltigAb.',
        'The requested VAT number is not yet valid; it is valid from the date in gueltigAb.',
      ),
      status(
        'evatr-2003',
        'Fehler',
        400,
        'angefragteUstid',
        'caller_error',
        'Das angegebene Länderkennzeichen der angefragten USt-IdNr. ist nicht gültig.',
        'The country prefix of the requested VAT number is not valid.',
      ),
      status('evatr-2004', 'Fehler', 500, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
      status(
        'evatr-2005',
        'Fehler',
        404,
        'anfragendeUstid',
        'requester_refused',
        'Die angegebene eigene DE USt-IdNr. ist zum Anfragezeitpunkt nicht gültig.',
        "The requester's own German VAT number is not valid at the time of the request.",
      ),
      status(
        'evatr-2006',
        'Hinweis',
        200,
        'angefragteUstid',
        'invalid',
        'Die angefragte USt-IdNr. ist zum Anfragezeitpunkt nicht gültig. Sie war gültig im Zeitraum, der durch die Werte in den Feldern gueltigAb und gueltigBis beschrieben ist.',
        'The requested VAT number is no longer valid; it was valid from gueltigAb to gueltigBis.',
      ),
      status(
        'evatr-2007',
        'Fehler',
        500,
        null,
        'unavailable',
        'Bei der Verarbeitung der Daten aus dem angefragten EU-Mitgliedstaat ist ein Fehler aufgetreten. Ihre Anfrage kann deshalb nicht bearbeitet werden.',
        "An error occurred while processing the member state's data; the request cannot be processed.",
      ),
      status(
        'evatr-2008',
        'Hinweis',
        200,
        null,
        'valid_not_qualified',
        'Die angefragte USt-IdNr. ist zum Anfragezeitpunkt gültig. Für die qualifizierte Bestätigungsanfrage liegt einer Besonderheit vor. Für Rückfragen wenden Sie sich an das BZSt.',
        'The requested VAT number is valid, but the qualified confirmation has a special case; contact the BZSt.',
      ),
      status('evatr-2011', 'Fehler', 500, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
      status('evatr-3011', 'Fehler', 500, null, 'unavailable', TRY_LATER_DE, TRY_LATER_EN),
    ].map((s) => [s.code, Object.freeze(s)]),
  ),
);

/** Every code of the official list, in list order. */
export const EVATR_STATUS_CODES: readonly string[] = Object.freeze(Object.keys(EVATR_STATUSES));

/** Status code → category (the DESIGN mapping table). Codes not listed are `unavailable`. */
export const EVATR_STATUS_CATEGORIES: Readonly<Record<string, EvatrStatusCategory>> = Object.freeze(
  Object.fromEntries(Object.values(EVATR_STATUSES).map((s) => [s.code, s.category])),
);

/**
 * Categorises an upstream status. `evatr-0000` is `qualified` only when `allSuppliedFieldsMatch` is
 * true (at least one field was supplied and every supplied field came back `A`), otherwise
 * `valid_not_qualified`. Unknown codes are `unavailable`.
 */
export function categoriseEvatrStatus(
  code: string,
  options: { allSuppliedFieldsMatch?: boolean } = {},
): EvatrCategory {
  const category = Object.hasOwn(EVATR_STATUS_CATEGORIES, code) ? EVATR_STATUS_CATEGORIES[code] : undefined;
  if (category === undefined) return 'unavailable';
  if (category === 'valid')
    return options.allSuppliedFieldsMatch === true ? 'qualified' : 'valid_not_qualified';
  return category;
}

/** English description of a status code, for error messages; unknown codes get a generic text. */
export function describeEvatrStatus(code: string): string {
  const info = Object.hasOwn(EVATR_STATUSES, code) ? EVATR_STATUSES[code] : undefined;
  return info?.english ?? `Unknown status ${code} from the authority; treated as unavailable.`;
}

// ---------------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------------

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

export interface EvatrClientOptions {
  /** Base URL including `/app`, e.g. `https://api.evatr.vies.bzst.de/app`. */
  baseUrl: string;
  /** Deadline for the whole exchange (connect, headers and body). */
  timeoutMs: number;
  /** How requests are sent (default: Node's HTTP client over keep-alive connections). */
  transport?: Transport;
  /** Send requests through this `fetch` instead (when no `transport` is given). */
  fetch?: typeof fetch;
  now?: () => Date;
}

export interface EvatrClient {
  confirm(request: EvatrRequest): Promise<EvatrResult>;
}

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

export function createEvatrClient(options: EvatrClientOptions): EvatrClient {
  const transport = options.transport ?? transportFor(options.fetch);
  const now = options.now ?? (() => new Date());
  const url = `${options.baseUrl.replace(/\/+$/, '')}/v1/abfrage`;

  async function confirm(request: EvatrRequest): Promise<EvatrResult> {
    const requestBody = buildEvatrRequestBody(request);
    let httpStatus: number | null = null;
    let contentType: string | null = null;
    let responseBody: string | null = null;
    const failure = (reason: EvatrFailureReason, message: string): EvatrFailure => ({
      kind: 'failure',
      reason,
      message,
      raw: { url, requestBody, responseBody, httpStatus, contentType },
    });

    const outcome = await transport({
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: requestBody,
      timeoutMs: options.timeoutMs,
      ...(request.signal ? { signal: request.signal } : {}),
    });
    if (!outcome.ok) {
      if (outcome.kind === 'timeout') {
        return request.signal?.aborted
          ? failure('timeout', 'The eVatR request was aborted by the caller')
          : failure('timeout', `No answer from eVatR within ${options.timeoutMs} ms`);
      }
      if (outcome.kind === 'too_large') return failure('bad_response', `eVatR sent ${outcome.message}`);
      return failure('network', `eVatR could not be reached: ${outcome.message}`);
    }
    httpStatus = outcome.status;
    contentType = outcome.headers.get('content-type');
    responseBody = outcome.body;

    const parsed = parseJsonObject(responseBody);
    if (parsed === null) {
      const what = responseBody.trim() === '' ? 'an empty body' : 'a body that is not a JSON object';
      return failure('bad_response', `eVatR answered HTTP ${httpStatus} with ${what}`);
    }
    const code = parsed.status;
    if (typeof code !== 'string' || code.trim() === '') {
      return failure('bad_response', `eVatR answered HTTP ${httpStatus} without a status`);
    }

    const upstreamMatches = {
      name: stringOrNull(parsed.ergFirmenname),
      street: stringOrNull(parsed.ergStrasse),
      postcode: stringOrNull(parsed.ergPlz),
      town: stringOrNull(parsed.ergOrt),
    };
    const matches = {} as EvatrMatches;
    const suppliedFields: EvatrField[] = [];
    for (const { field } of FIELDS) {
      const isSupplied = supplied(request[field]);
      if (isSupplied) suppliedFields.push(field);
      matches[field] = toMatchCode(isSupplied, upstreamMatches[field]);
    }
    const allSuppliedFieldsMatch =
      suppliedFields.length > 0 && suppliedFields.every((f) => matches[f] === 'A');
    const known = Object.hasOwn(EVATR_STATUSES, code);
    const upstreamTimestamp = stringOrNull(parsed.anfrageZeitpunkt);

    return {
      kind: 'answer',
      status: code,
      category: categoriseEvatrStatus(code, { allSuppliedFieldsMatch }),
      known,
      description: describeEvatrStatus(code),
      httpStatus,
      id: nonEmptyStringOrNull(parsed.id),
      matches,
      upstreamMatches,
      validFrom: parseEvatrDate(parsed.gueltigAb),
      validTo: parseEvatrDate(parsed.gueltigBis),
      answeredAt: normaliseEvatrTimestamp(upstreamTimestamp) ?? now().toISOString(),
      upstreamTimestamp,
      company: {
        name: nonEmptyStringOrNull(parsed.firmenname),
        street: nonEmptyStringOrNull(parsed.strasse),
        postcode: nonEmptyStringOrNull(parsed.plz),
        town: nonEmptyStringOrNull(parsed.ort),
      },
      raw: { url, requestBody, responseBody, httpStatus, contentType },
    };
  }

  return { confirm };
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

/** The number scheme of each prefix eVatR confirms (EU member states as VIES writes them, and XI). */
const EVATR_NUMBER_SCHEMES: Readonly<Record<string, RegExp>> = {
  AT: /^U\d{8}$/,
  BE: /^[01]\d{9}$/,
  BG: /^\d{9,10}$/,
  CY: /^\d{8}[A-Z]$/,
  CZ: /^\d{8,10}$/,
  DK: /^\d{8}$/,
  EE: /^\d{9}$/,
  EL: /^\d{9}$/,
  ES: /^[A-Z0-9]\d{7}[A-Z0-9]$/,
  FI: /^\d{8}$/,
  FR: /^[A-HJ-NP-Z0-9]{2}\d{9}$/,
  HR: /^\d{11}$/,
  HU: /^\d{8}$/,
  IE: /^(\d{7}[A-W][A-I]?|\d[A-Z+*]\d{5}[A-W])$/,
  IT: /^\d{11}$/,
  LT: /^(\d{9}|\d{12})$/,
  LU: /^\d{8}$/,
  LV: /^\d{11}$/,
  MT: /^\d{8}$/,
  NL: /^\d{9}B\d{2}$/,
  PL: /^\d{10}$/,
  PT: /^\d{9}$/,
  RO: /^[1-9]\d{1,9}$/,
  SE: /^\d{10}01$/,
  SI: /^\d{8}$/,
  SK: /^\d{10}$/,
  XI: /^(\d{9}|\d{12}|GD\d{3}|HA\d{3})$/,
};

/**
 * The status eVatR answers, without looking anything up, for a requested number (compact and
 * upper-case) it cannot take: `evatr-0005` when it is not two letters and 2–12 characters with a
 * digit, `evatr-2003` when the prefix is not a member state's, `evatr-0012` when the national part
 * does not fit the country's scheme; `null` when the number is well formed. Test mode applies the
 * same rules, so a test key is refused exactly where a live key is.
 */
export function evatrNumberStatus(target: string): 'evatr-0005' | 'evatr-2003' | 'evatr-0012' | null {
  if (!/^[A-Z]{2}[A-Z0-9+*]{2,12}$/.test(target) || !/\d/.test(target)) return 'evatr-0005';
  const scheme = EVATR_NUMBER_SCHEMES[target.slice(0, 2)];
  if (!scheme) return 'evatr-2003';
  if (!scheme.test(target.slice(2))) return 'evatr-0012';
  return null;
}
