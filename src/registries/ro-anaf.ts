/**
 * Romanian register of VAT payers (ANAF), web service PlatitorTvaRest v9:
 * `POST {base}/api/PlatitorTvaRest/v9/tva` with `[{"cui": 12345678, "data": "YYYY-MM-DD"}, …]`
 * (base `https://webservicesp.anaf.ro`). ANAF's specification (doc_WS_V9.txt): at most 100 CUIs in a
 * request and at most 1 request a second per client; "any attempt to overload the server will be
 * punished".
 *
 * The answer `{cod, message, found: [...], notFound: [...]}`: each found entry has
 * `date_generale{cui, denumire, adresa, nrRegCom, stare_inregistrare, …}`,
 * `inregistrare_scop_Tva{scpTVA, perioade_TVA[{data_inceput_ScpTVA, data_sfarsit_ScpTVA,
 * data_anul_imp_ScpTVA, mesaj_ScpTVA}]}`, `stare_inactiv{statusInactivi, dataInactivare, …}` and
 * `adresa_sediu_social{sdenumire_Strada, snumar_Strada, sdenumire_Localitate, sdenumire_Judet,
 * scod_Postal, stara, …}`; `notFound` lists the CUIs ANAF does not know (as numbers, or as `{cui}`
 * objects in some clients' captures). `scpTVA: true` is registered for VAT on the date asked; a CUI in
 * `notFound` is not a taxpayer at all, also `valid: false`. The v9 service is reported to answer the
 * same JSON with HTTP 404 when nothing is found, so the body is read whatever the status. An inactive
 * taxpayer (`statusInactivi`) is reported with the `inactive_taxpayer` flag.
 *
 * ANAF's web-application firewall answers a request it rejects with an HTML page "The requested URL
 * was rejected. Please consult with your administrator. Your support ID is: …" (itrack/anaf#19): that
 * is throttling, never an answer.
 *
 * Sources: the recorded answers in TecsiAron/ANAF-API-Client-PHP tests/ParseTests/EntityResponseTest.php
 * (a found entry and `notFound: [12345678]`); the limits quoted from doc_WS_V9.txt in
 * StephenAbbott/opencheck backend/opencheck/sources/anaf_romania.py; the 404 behaviour noted in public
 * client code (index id 52119854806).
 */
import {
  cleanText,
  excerpt,
  type FetchFn,
  type HttpResponse,
  isRecord,
  joinUrl,
  looksLikeHtml,
  parseJson,
  transportFor,
} from './http.js';
import {
  isoDay,
  nationalAddress,
  nationalAnswer,
  nationalTransportFailure,
  unexpectedStatus,
  zoneDate,
} from './national-common.js';
import { roCui } from './national-ids.js';
import {
  type NationalAddress,
  type NationalFlag,
  type NationalLimits,
  type NationalLookup,
  type NationalRegistration,
  type NationalRegistryClient,
  type NationalResult,
  nationalUnavailable,
} from './national-port.js';

export interface RoAnafClientOptions {
  /** Service base as documented, e.g. `https://webservicesp.anaf.ro`; the client adds `/api/PlatitorTvaRest/v9/tva`. */
  baseUrl: string;
  timeoutMs: number;
  fetch?: FetchFn;
  now?: () => Date;
}

const SOURCE = 'ro_anaf';
const LABEL = 'ANAF';
export const RO_ANAF_PATH = '/api/PlatitorTvaRest/v9/tva';
export const RO_TIME_ZONE = 'Europe/Bucharest';

export const RO_ANAF_LIMITS: NationalLimits = Object.freeze({
  concurrency: 1,
  rates: [{ requests: 1, windowMs: 1_000 }],
  daily: null,
  numbersPerRequest: 100,
  maintenance: null,
  published: true,
  source: 'ANAF doc_WS_V9.txt: at most 100 CUIs per request, at most 1 request per second per client',
});

export function createRoAnafClient(options: RoAnafClientOptions): NationalRegistryClient {
  const send = transportFor(options.fetch);
  const now = options.now ?? (() => new Date());
  const url = joinUrl(options.baseUrl, RO_ANAF_PATH);

  async function ask(
    items: { cui: number; date: string }[],
    signal?: AbortSignal,
  ): Promise<NationalResult[]> {
    const outcome = await send({
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(items.map((item) => ({ cui: item.cui, data: item.date }))),
      timeoutMs: options.timeoutMs,
      ...(signal ? { signal } : {}),
    });
    if (!outcome.ok) {
      const failure = nationalTransportFailure(SOURCE, LABEL, outcome);
      return items.map(() => failure);
    }
    return interpretRoAnswer(
      outcome,
      items.map((item) => item.cui),
      now(),
    );
  }

  async function lookup(request: NationalLookup): Promise<NationalResult> {
    const cui = roCui(request.vat.national);
    if (!cui.ok) return nationalUnavailable(SOURCE, 'rejected', cui.message);
    const date = request.date ?? zoneDate(RO_TIME_ZONE, now());
    const [result] = await ask([{ cui: cui.id, date }], request.signal);
    return result ?? nationalUnavailable(SOURCE, 'bad_response', 'no answer was assembled');
  }

  async function lookupMany(requests: NationalLookup[]): Promise<NationalResult[]> {
    const results: (NationalResult | undefined)[] = new Array(requests.length);
    const wanted: { cui: number; date: string; indexes: number[] }[] = [];
    requests.forEach((request, index) => {
      const cui = roCui(request.vat.national);
      if (!cui.ok) {
        results[index] = nationalUnavailable(SOURCE, 'rejected', cui.message);
        return;
      }
      const date = request.date ?? zoneDate(RO_TIME_ZONE, now());
      // One CUI once per request: the answer's entries are told apart by CUI alone.
      const same = wanted.find((item) => item.cui === cui.id && item.date === date);
      if (same) same.indexes.push(index);
      else wanted.push({ cui: cui.id, date, indexes: [index] });
    });
    const signal = requests.find((request) => request.signal)?.signal;
    const pending = [...wanted];
    while (pending.length > 0) {
      const chunk: typeof wanted = [];
      for (let i = 0; i < pending.length && chunk.length < RO_ANAF_LIMITS.numbersPerRequest; ) {
        const item = pending[i] as (typeof wanted)[number];
        if (chunk.some((taken) => taken.cui === item.cui)) i++;
        else chunk.push(...pending.splice(i, 1));
      }
      const answers = await ask(chunk, signal);
      chunk.forEach((item, i) => {
        for (const index of item.indexes) results[index] = answers[i];
      });
    }
    return results.map(
      (result) => result ?? nationalUnavailable(SOURCE, 'bad_response', 'no answer was assembled'),
    );
  }

  return { source: SOURCE, country: 'RO', limits: RO_ANAF_LIMITS, lookup, lookupMany };
}

/** The answer for each CUI asked, in order (pure: the HTTP answer and when it arrived). */
export function interpretRoAnswer(outcome: HttpResponse, cuis: number[], received: Date): NationalResult[] {
  if (looksLikeHtml(outcome.body) && /requested url was rejected/i.test(outcome.body)) {
    const support = /support id is:?\s*(\d+)/i.exec(outcome.body)?.[1];
    const failure = nationalUnavailable(
      SOURCE,
      'throttled',
      `ANAF's firewall rejected the request${support ? ` (support ID ${support})` : ''}`,
      { upstreamCode: 'REQUEST_REJECTED' },
    );
    return cuis.map(() => failure);
  }
  const json = parseJson(outcome.body);
  const found = isRecord(json) && Array.isArray(json.found) ? json.found.filter(isRecord) : null;
  const notFound = isRecord(json) && Array.isArray(json.notFound) ? json.notFound : null;
  if (!found || !notFound || (outcome.status !== 200 && outcome.status !== 404)) {
    const failure = unexpectedStatus(SOURCE, LABEL, outcome, received);
    return cuis.map(() => failure);
  }
  const missing = new Set(notFound.map(notFoundCui).filter((cui): cui is number => cui !== null));
  return cuis.map((cui) => {
    const entry = found.find((candidate) => entryCui(candidate) === cui);
    if (entry) return foundAnswer(entry, cui, received);
    if (missing.has(cui)) {
      return nationalAnswer({
        source: SOURCE,
        country: 'RO',
        national: String(cui),
        valid: false,
        identifiers: { cui: String(cui) },
        checkedAt: received,
      });
    }
    return nationalUnavailable(SOURCE, 'bad_response', `ANAF answered neither found nor notFound for ${cui}`);
  });
}

function entryCui(entry: Record<string, unknown>): number | null {
  const general = isRecord(entry.date_generale) ? entry.date_generale : null;
  return general ? asCui(general.cui) : null;
}

function notFoundCui(value: unknown): number | null {
  return isRecord(value) ? asCui(value.cui) : asCui(value);
}

function asCui(value: unknown): number | null {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^\d{1,13}$/.test(value.trim())) return Number(value.trim());
  return null;
}

function foundAnswer(entry: Record<string, unknown>, cui: number, received: Date): NationalResult {
  const general = entry.date_generale as Record<string, unknown>;
  const vat = isRecord(entry.inregistrare_scop_Tva) ? entry.inregistrare_scop_Tva : null;
  if (!vat || typeof vat.scpTVA !== 'boolean') {
    return nationalUnavailable(
      SOURCE,
      'bad_response',
      `ANAF answered ${cui} without inregistrare_scop_Tva.scpTVA: ${excerpt(JSON.stringify(vat ?? null))}`,
    );
  }
  const identifiers: Record<string, string> = { cui: String(cui) };
  const tradeRegister = cleanText(general.nrRegCom);
  if (tradeRegister) identifiers.tradeRegisterNumber = tradeRegister;
  return nationalAnswer({
    source: SOURCE,
    country: 'RO',
    national: String(cui),
    valid: vat.scpTVA,
    registerStatus: `scpTVA=${vat.scpTVA}`,
    name: cleanText(general.denumire),
    address: roAddress(entry.adresa_sediu_social, cleanText(general.adresa)),
    identifiers,
    flags: inactiveFlag(entry.stare_inactiv),
    registrations: vatPeriods(vat.perioade_TVA),
    checkedAt: received,
  });
}

function vatPeriods(value: unknown): NationalRegistration[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord).map((period) => ({
    from: isoDay(period.data_inceput_ScpTVA),
    to: isoDay(period.data_sfarsit_ScpTVA) ?? isoDay(period.data_anul_imp_ScpTVA),
    kind: cleanText(period.mesaj_ScpTVA),
  }));
}

function inactiveFlag(value: unknown): NationalFlag[] {
  if (!isRecord(value) || value.statusInactivi !== true) return [];
  return [{ code: 'inactive_taxpayer', since: isoDay(value.dataInactivare), registerValue: 'true' }];
}

/** `adresa_sediu_social` (the registered office), with `date_generale.adresa` as its rendering. */
export function roAddress(value: unknown, text: string | null): NationalAddress | null {
  if (!isRecord(value))
    return text ? { text, street: null, postcode: null, city: null, country: null } : null;
  const streetName = cleanText(value.sdenumire_Strada);
  const number = cleanText(value.snumar_Strada);
  const street = streetName ? [streetName, number].filter(Boolean).join(' ') : null;
  const city = cleanText(value.sdenumire_Localitate);
  const postcode = cleanText(value.scod_Postal);
  const country = cleanText(value.stara);
  const county = cleanText(value.sdenumire_Judet);
  const built = nationalAddress({
    street,
    postcode,
    city,
    country,
    lines: [
      street,
      cleanText(value.sdetalii_Adresa),
      [postcode, city].filter(Boolean).join(' ') || null,
      county,
    ],
  });
  if (!built) return text ? { text, street: null, postcode: null, city: null, country: null } : null;
  return text ? { ...built, text } : built;
}
