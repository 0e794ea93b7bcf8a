/**
 * Polish white list of VAT payers (Ministry of Finance, "Wykaz podatników VAT", API version 1.6):
 * `GET {base}/api/search/nip/{nip}?date=YYYY-MM-DD` and, for up to 30 numbers in one search,
 * `GET {base}/api/search/nips/{nip,nip,…}?date=…` (base `https://wl-api.mf.gov.pl`; the test
 * service is `https://wl-test.mf.gov.pl`).
 *
 * The answer: `{result: {subject: {name, nip, statusVat, regon, krs, residenceAddress,
 * workingAddress, registrationLegalDate, removalDate, restorationDate, …} | null, requestId,
 * requestDateTime}}`; the batch answers `result.entries[{identifier, subjects[] | error}]`.
 * `statusVat` `Czynny` (active) is registered; `Zwolniony` (exempt) and `Niezarejestrowany`
 * (not registered) are not. A NIP the list does not hold answers `subject: null` with a
 * `requestId`: the list of VAT payers names every registered, exempt, refused and removed payer, so a
 * number it does not hold was never registered, and that answer is `valid: false`. `requestId` is the
 * consultation's electronic key and is kept as the consultation number.
 *
 * Errors are `{code, message}` bodies (HTTP 400, 404 for an unknown path): `WL-1xx` for a request the
 * list refuses (WL-113/114/115 a bad NIP, WL-103 a date in the future), WL-191 the daily limit of the
 * IP address (blocked until midnight, Warsaw time), WL-195/196 a database being updated, and
 * `HTTP-503` "Usługa niedostępna" in maintenance. None of them is an answer about the number.
 *
 * Sources: the API's own documentation (wl-test.mf.gov.pl, version 1.6.0, "API Rejestr WL"); the
 * recorded answers in JacekSmi/PolishOpenData tests/Fixtures/bialalista/ (search-nip-orlen.json,
 * search-nip-notfound.json, search-nips-mixed.json, error-400-wl103-future-date.json,
 * error-400-wl118-old-date.json, error-404-wl190-unknown-route.json); the error codes in
 * myslak71/vater src/vater/errors.py; the maintenance body compared against in public client code
 * (index id 18969627517).
 */
import {
  cleanText,
  excerpt,
  type FetchFn,
  type HttpResponse,
  isRecord,
  joinUrl,
  notAhead,
  parseJson,
  transportFor,
} from './http.js';
import {
  isoDay,
  nationalAddress,
  nationalAnswer,
  nationalTransportFailure,
  secondsUntilMidnight,
  unexpectedStatus,
  zoneDate,
  zoneWallTimeToInstant,
} from './national-common.js';
import { plNip } from './national-ids.js';
import {
  type NationalAddress,
  type NationalLimits,
  type NationalLookup,
  type NationalRegistration,
  type NationalRegistryClient,
  type NationalResult,
  type NationalUnavailable,
  nationalUnavailable,
} from './national-port.js';

export interface PlWhitelistClientOptions {
  /** API base as documented, e.g. `https://wl-api.mf.gov.pl`; the client adds `/api/search/…`. */
  baseUrl: string;
  timeoutMs: number;
  fetch?: FetchFn;
  now?: () => Date;
}

const SOURCE = 'pl_whitelist';
const LABEL = 'the Polish white list';
export const PL_TIME_ZONE = 'Europe/Warsaw';

/**
 * The daily quota as reported in 2026 by three independent clients (100 searches of up to 30 NIPs a
 * day per IP address, 5,000 account checks; one more blocks the IP until midnight): JacekSmi/
 * PolishOpenData src/PolishOpenData.BialaLista/BialaListaClientOptions.cs, pwasniowski/mcp-wl-vat
 * README, index id 70619249351. The ministry announced 10 searches of 30 subjects in 2019
 * (legalis.pl); no current official figure was found in stored copies of its documentation.
 */
export const PL_WHITELIST_LIMITS: NationalLimits = Object.freeze({
  concurrency: null,
  rates: [],
  daily: { requests: 100, timeZone: PL_TIME_ZONE },
  numbersPerRequest: 30,
  maintenance: null,
  published: false,
  source:
    'third-party reports (JacekSmi/PolishOpenData, pwasniowski/mcp-wl-vat): 100 searches of up to 30 NIPs a day per IP address',
});

/** `statusVat` values and whether they are a registration. */
const STATUS_VALID: ReadonlyMap<string, boolean> = new Map([
  ['Czynny', true],
  ['Zwolniony', false],
  ['Niezarejestrowany', false],
]);

/** WL codes that are the list refusing this request: retrying the same request will not help. */
const REFUSALS = new Set([
  'WL-101',
  'WL-102',
  'WL-103',
  'WL-112',
  'WL-113',
  'WL-114',
  'WL-115',
  'WL-118',
  'WL-130',
  'WL-190',
]);

export function createPlWhitelistClient(options: PlWhitelistClientOptions): NationalRegistryClient {
  const send = transportFor(options.fetch);
  const now = options.now ?? (() => new Date());

  async function get(path: string, date: string, signal?: AbortSignal) {
    return send({
      url: `${joinUrl(options.baseUrl, path)}?date=${encodeURIComponent(date)}`,
      method: 'GET',
      headers: { accept: 'application/json' },
      timeoutMs: options.timeoutMs,
      ...(signal ? { signal } : {}),
    });
  }

  async function lookup(request: NationalLookup): Promise<NationalResult> {
    const nip = plNip(request.vat.national);
    if (!nip.ok) return nationalUnavailable(SOURCE, 'rejected', nip.message);
    const date = request.date ?? zoneDate(PL_TIME_ZONE, now());
    const outcome = await get(`/api/search/nip/${nip.id}`, date, request.signal);
    if (!outcome.ok) return nationalTransportFailure(SOURCE, LABEL, outcome);
    return interpretPlSearch(outcome, nip.id, now());
  }

  async function lookupMany(requests: NationalLookup[]): Promise<NationalResult[]> {
    const results: (NationalResult | undefined)[] = new Array(requests.length);
    const groups = new Map<string, { nip: string; indexes: number[] }[]>();
    requests.forEach((request, index) => {
      const nip = plNip(request.vat.national);
      if (!nip.ok) {
        results[index] = nationalUnavailable(SOURCE, 'rejected', nip.message);
        return;
      }
      const date = request.date ?? zoneDate(PL_TIME_ZONE, now());
      const group = groups.get(date) ?? [];
      const same = group.find((item) => item.nip === nip.id);
      if (same) same.indexes.push(index);
      else group.push({ nip: nip.id, indexes: [index] });
      groups.set(date, group);
    });
    const signal = requests.find((request) => request.signal)?.signal;
    for (const [date, group] of groups) {
      for (let start = 0; start < group.length; start += PL_WHITELIST_LIMITS.numbersPerRequest) {
        const chunk = group.slice(start, start + PL_WHITELIST_LIMITS.numbersPerRequest);
        const nips = chunk.map((item) => item.nip);
        const outcome = await get(`/api/search/nips/${nips.join(',')}`, date, signal);
        const answers = outcome.ok
          ? interpretPlBatch(outcome, nips, now())
          : nips.map(() => nationalTransportFailure(SOURCE, LABEL, outcome));
        chunk.forEach((item, i) => {
          for (const index of item.indexes) results[index] = answers[i];
        });
      }
    }
    return results.map(
      (result) => result ?? nationalUnavailable(SOURCE, 'bad_response', 'no answer was assembled'),
    );
  }

  return { source: SOURCE, country: 'PL', limits: PL_WHITELIST_LIMITS, lookup, lookupMany };
}

/** One `search/nip` answer for `nip` (pure: the HTTP answer and when it arrived). */
export function interpretPlSearch(outcome: HttpResponse, nip: string, received: Date): NationalResult {
  const json = parseJson(outcome.body);
  const error = listError(json, received);
  if (error) return error;
  const result = isRecord(json) ? json.result : undefined;
  if (outcome.status !== 200 || !isRecord(result) || !('subject' in result)) {
    return unexpectedStatus(SOURCE, LABEL, outcome, received);
  }
  return subjectAnswer(result.subject, nip, meta(result, received));
}

/** A `search/nips` answer, one result per NIP asked, in order. */
export function interpretPlBatch(outcome: HttpResponse, nips: string[], received: Date): NationalResult[] {
  const json = parseJson(outcome.body);
  const error = listError(json, received);
  if (error) return nips.map(() => error);
  const result = isRecord(json) ? json.result : undefined;
  const entries = isRecord(result) && Array.isArray(result.entries) ? result.entries.filter(isRecord) : null;
  if (outcome.status !== 200 || !isRecord(result) || !entries) {
    const failure = unexpectedStatus(SOURCE, LABEL, outcome, received);
    return nips.map(() => failure);
  }
  const shared = meta(result, received);
  return nips.map((nip) => {
    const entry = entries.find((candidate) => candidate.identifier === nip);
    if (!entry) {
      return nationalUnavailable(SOURCE, 'bad_response', `${LABEL} answered without an entry for ${nip}`);
    }
    const entryError = listError(entry, received);
    if (entryError) return entryError;
    if (!Array.isArray(entry.subjects)) {
      return nationalUnavailable(SOURCE, 'bad_response', `${LABEL} entry for ${nip} has no subjects`);
    }
    const subject = entry.subjects.find((candidate) => isRecord(candidate) && candidate.nip === nip);
    if (entry.subjects.length > 0 && subject === undefined) {
      return nationalUnavailable(SOURCE, 'bad_response', `${LABEL} answered other subjects for ${nip}`);
    }
    return subjectAnswer(subject ?? null, nip, shared);
  });
}

interface ListMeta {
  requestId: string | null;
  checkedAt: Date;
}

function meta(result: Record<string, unknown>, received: Date): ListMeta {
  return {
    requestId: cleanText(result.requestId),
    checkedAt: parseRequestDateTime(result.requestDateTime, received),
  };
}

/** The answer about one NIP from its `subject` (`null`: not on the list). */
function subjectAnswer(subject: unknown, nip: string, list: ListMeta): NationalResult {
  const base = {
    source: SOURCE,
    country: 'PL',
    national: nip,
    checkedAt: list.checkedAt,
    consultationNumber: list.requestId,
  } as const;
  const identifiers: Record<string, string> = { nip };
  if (list.requestId) identifiers.requestId = list.requestId;
  if (subject === null) return nationalAnswer({ ...base, valid: false, identifiers });
  if (!isRecord(subject)) {
    return nationalUnavailable(SOURCE, 'bad_response', `${LABEL} answered a subject that is not an object`);
  }
  if (subject.nip !== nip) {
    return nationalUnavailable(
      SOURCE,
      'bad_response',
      `${LABEL} answered for ${String(subject.nip)} instead of ${nip}`,
    );
  }
  const status = typeof subject.statusVat === 'string' ? subject.statusVat : '';
  const valid = STATUS_VALID.get(status);
  if (valid === undefined) {
    return nationalUnavailable(
      SOURCE,
      'bad_response',
      `${LABEL} answered an unknown statusVat: ${excerpt(JSON.stringify(subject.statusVat ?? null))}`,
    );
  }
  for (const key of ['regon', 'krs'] as const) {
    const value = cleanText(subject[key]);
    if (value) identifiers[key] = value;
  }
  return nationalAnswer({
    ...base,
    valid,
    registerStatus: status,
    name: cleanText(subject.name),
    address: plAddress(cleanText(subject.workingAddress) ?? cleanText(subject.residenceAddress)),
    identifiers,
    registrations: registrations(subject),
  });
}

function registrations(subject: Record<string, unknown>): NationalRegistration[] {
  const list: NationalRegistration[] = [];
  const from = isoDay(subject.registrationLegalDate);
  const removed = isoDay(subject.removalDate);
  if (from) list.push({ from, to: removed, kind: 'registration' });
  const restored = isoDay(subject.restorationDate);
  if (restored) list.push({ from: restored, to: null, kind: 'restoration' });
  return list;
}

/**
 * `CHEMIKÓW 7, 09-411 PŁOCK` (recorded) or `ul/ Prosta 49 00-838 Warszawa` (the documentation's
 * example): the street, then the postcode `NN-NNN` and the town.
 */
export function plAddress(text: string | null): NationalAddress | null {
  if (!text) return null;
  const match = /^(.*?)[,\s]+(\d{2}-\d{3})\s+(.+)$/.exec(text);
  if (!match) return { text, street: null, postcode: null, city: null, country: null };
  const split = nationalAddress({
    street: cleanText(match[1]),
    postcode: match[2] ?? null,
    city: cleanText(match[3]),
    country: null,
  });
  return split ? { ...split, text } : null;
}

/** `24-09-2026 02:36:01`, Warsaw time (recorded), as an instant; else when the answer arrived. */
export function parseRequestDateTime(value: unknown, received: Date): Date {
  const match =
    typeof value === 'string' ? /^(\d{2})-(\d{2})-(\d{4}) (\d{2}):(\d{2}):(\d{2})$/.exec(value) : null;
  if (!match) return received;
  const [day, month, year, hour, minute, second] = match.slice(1).map(Number) as number[];
  const wall = Date.UTC(year ?? 0, (month ?? 1) - 1, day, hour, minute, second);
  const at = zoneWallTimeToInstant(PL_TIME_ZONE, wall);
  return Number.isNaN(at) ? received : notAhead(new Date(at), received);
}

/** The list's error envelope (`{code, message}`, or under `exception` or `error`) as unavailability. */
function listError(json: unknown, received: Date): NationalUnavailable | undefined {
  if (!isRecord(json)) return undefined;
  const envelope = isRecord(json.exception) ? json.exception : isRecord(json.error) ? json.error : json;
  const code = typeof envelope.code === 'string' ? envelope.code.trim() : '';
  if (code === '') return undefined;
  const upstream = cleanText(envelope.message);
  const message = `${LABEL} answered ${code}${upstream ? ` (${upstream})` : ''}`;
  const extra = { upstreamCode: code };
  if (code === 'WL-191') {
    return nationalUnavailable(SOURCE, 'throttled', `${message}: the daily limit of this IP address`, {
      ...extra,
      retryAfterSeconds: secondsUntilMidnight(PL_TIME_ZONE, received),
    });
  }
  if (code === 'WL-195')
    return nationalUnavailable(SOURCE, 'down', message, { ...extra, retryAfterSeconds: 1 });
  if (REFUSALS.has(code)) return nationalUnavailable(SOURCE, 'rejected', message, extra);
  if (code === 'HTTP-429') return nationalUnavailable(SOURCE, 'throttled', message, extra);
  return nationalUnavailable(SOURCE, 'down', message, extra);
}
