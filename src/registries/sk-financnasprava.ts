/**
 * Slovak Financial Administration (Finančná správa) open data, the information lists API:
 * `GET {base}/api/data/{slug}/search?column=ic_dph&search=SK…&page=1` with the header `key: <API
 * key>` (base `https://iz.opendata.financnasprava.sk`; the key is free, sent by e-mail after a form
 * on opendata.financnasprava.sk/page/openapi).
 *
 * Three lists are asked, each by IČ DPH:
 * - `ds_dphs` (Zoznam subjektov registrovaných k DPH, the VAT payers): an entry is a VAT
 *   registration, with `druh_reg_dph` (`§4`, `§7`, `§7a`: the paragraph of the VAT Act it was made
 *   under), `datum_reg` (`DD.MM.YYYY`), the name (`nazov_ds`) and the address (`ulica_cislo`, `psc`,
 *   `obec`, `stat`);
 * - `ds_dphz` (payers for whom grounds to cancel the registration arose; a Slovak buyer of such a
 *   payer can be held liable for its unpaid VAT, § 69(14) of the VAT Act): asked for a registered
 *   payer, and reported as the `deregistration_grounds` flag;
 * - `ds_dphv` (payers whose registration was cancelled, `dat_vymazu`): asked for a number that is
 *   not a VAT payer, to say when it stopped being one.
 *
 * The answer is the page envelope `{page, pages, itemsCount, itemsPerPage, data: [...]}`. A search
 * without results answers HTTP 404 with `{"status":"error","code":"404","message":"Page doesn't
 * exists"}` on page 1; that answer on `ds_dphs` (or an empty page) is the register saying the number
 * is not a VAT payer, and is `valid: false`. Any other 404 (an unknown list), a 401 or 403 (the key
 * refused or expired), 400 (a refused search), 429, 5xx, an HTML page or a body that is not the
 * envelope is unavailability, never "not registered". An answer is whole or not given: when a
 * second list cannot be read the lookup is unavailable.
 *
 * Sources: MarcelGeo/openapi-financna-sprava README.md (the recorded `ds_dphs` answer, the lists and
 * their searchable columns), ds_dphs_search.sh and generator/swagger-iz.yaml (the paths, the `key`
 * header, the 400 and 404 cases); the search-miss body and the envelope as public client code
 * checks them (index ids 66106846814, 65980763465); 401 for a refused key (index ids 29206028240,
 * 30145780736); the columns of `ds_dphz` and `ds_dphv` in the Administration's XML exports (index id
 * 68326505257).
 */
import {
  cleanText,
  type FetchFn,
  type HttpResponse,
  isRecord,
  joinUrl,
  parseJson,
  transportFor,
} from './http.js';
import {
  describeBody,
  dottedDay,
  nationalAddress,
  nationalAnswer,
  nationalTransportFailure,
  unexpectedStatus,
} from './national-common.js';
import { skIcDph } from './national-ids.js';
import {
  type NationalFlag,
  type NationalLimits,
  type NationalLookup,
  type NationalRegistration,
  type NationalRegistryClient,
  type NationalResult,
  type NationalUnavailable,
  nationalUnavailable,
} from './national-port.js';

export interface SkFinancnaSpravaClientOptions {
  /** `SK_OPENDATA_URL`: the API host, e.g. `https://iz.opendata.financnasprava.sk`; the client adds `/api/data/…`. */
  baseUrl: string;
  /** `SK_OPENDATA_KEY`: sent in the `key` header; never in a message. */
  apiKey: string;
  timeoutMs: number;
  /**
   * The second lists asked (default both): `cancellationGrounds` (`ds_dphz`) for a registered payer,
   * `deregistered` (`ds_dphv`) for a number that is not one.
   */
  lists?: { cancellationGrounds?: boolean; deregistered?: boolean };
  fetch?: FetchFn;
  now?: () => Date;
}

const SOURCE = 'sk_financnasprava';
const LABEL = 'the Slovak Financial Administration';
export const SK_VAT_PAYERS = 'ds_dphs';
export const SK_CANCELLATION_GROUNDS = 'ds_dphz';
export const SK_DEREGISTERED = 'ds_dphv';
export type SkList = typeof SK_VAT_PAYERS | typeof SK_CANCELLATION_GROUNDS | typeof SK_DEREGISTERED;

/** The API's answer to a search without results, exactly. */
export const SK_SEARCH_MISS = Object.freeze({ status: 'error', code: '404', message: "Page doesn't exists" });

/**
 * Not published by the Administration: 1,000 requests an hour per key is what two independent
 * integrations report (index ids 51927535866, 70078336648). A lookup asks two lists.
 */
export const SK_FINANCNASPRAVA_LIMITS: NationalLimits = Object.freeze({
  concurrency: null,
  rates: [{ requests: 1000, windowMs: 3_600_000 }],
  daily: null,
  numbersPerRequest: 1,
  requestsPerLookup: 2,
  maintenance: null,
  published: false,
  source:
    'third-party reports (index ids 51927535866, 70078336648): 1,000 requests an hour per key; two requests a lookup',
});

export function createSkFinancnaSpravaClient(options: SkFinancnaSpravaClientOptions): NationalRegistryClient {
  const send = transportFor(options.fetch);
  const now = options.now ?? (() => new Date());
  const askGrounds = options.lists?.cancellationGrounds ?? true;
  const askDeregistered = options.lists?.deregistered ?? true;

  async function search(list: SkList, icDph: string, signal?: AbortSignal): Promise<SkRows> {
    const query = `column=ic_dph&search=${encodeURIComponent(icDph)}&page=1`;
    const outcome = await send({
      url: `${joinUrl(options.baseUrl, `/api/data/${list}/search`)}?${query}`,
      method: 'GET',
      headers: { accept: 'application/json', key: options.apiKey },
      timeoutMs: options.timeoutMs,
      ...(signal ? { signal } : {}),
    });
    if (!outcome.ok) return nationalTransportFailure(SOURCE, LABEL, outcome);
    return interpretSkSearch(outcome, list, icDph, now());
  }

  async function lookup(request: NationalLookup): Promise<NationalResult> {
    const icDph = skIcDph(request.vat.national);
    if (!icDph.ok) return nationalUnavailable(SOURCE, 'rejected', icDph.message);
    const payers = await search(SK_VAT_PAYERS, icDph.id, request.signal);
    if (payers.kind === 'unavailable') return payers;
    const payer = payers.rows[0];
    if (payer) {
      const grounds: SkRows = askGrounds
        ? await search(SK_CANCELLATION_GROUNDS, icDph.id, request.signal)
        : { kind: 'rows', rows: [] };
      if (grounds.kind === 'unavailable') return secondList(grounds, SK_CANCELLATION_GROUNDS);
      return registeredAnswer(icDph.id, payer, grounds.rows, now());
    }
    const deregistered: SkRows = askDeregistered
      ? await search(SK_DEREGISTERED, icDph.id, request.signal)
      : { kind: 'rows', rows: [] };
    if (deregistered.kind === 'unavailable') return secondList(deregistered, SK_DEREGISTERED);
    return notRegisteredAnswer(icDph.id, deregistered.rows, now());
  }

  return { source: SOURCE, country: 'SK', limits: SK_FINANCNASPRAVA_LIMITS, lookup };
}

/** The rows of one list about the number asked, or why the list could not be read. */
export type SkRows = { kind: 'rows'; rows: Record<string, unknown>[] } | NationalUnavailable;

/**
 * One search answer (pure: the HTTP answer and when it arrived): the rows whose `ic_dph` is the
 * number asked, `[]` for the register's documented miss, otherwise unavailability.
 */
export function interpretSkSearch(
  outcome: HttpResponse,
  list: SkList,
  icDph: string,
  received: Date,
): SkRows {
  const json = parseJson(outcome.body);
  const what = `${LABEL} (${list})`;
  if (outcome.status === 404 && isSearchMiss(json)) return { kind: 'rows', rows: [] };
  if (outcome.status === 401 || outcome.status === 403) {
    return nationalUnavailable(SOURCE, 'rejected', `${what} refused the API key (HTTP ${outcome.status})`, {
      upstreamCode: `HTTP_${outcome.status}`,
    });
  }
  if (outcome.status === 400) {
    return nationalUnavailable(
      SOURCE,
      'rejected',
      `${what} refused the search (HTTP 400 with ${describeBody(outcome.body)})`,
      { upstreamCode: 'HTTP_400' },
    );
  }
  if (outcome.status !== 200) return unexpectedStatus(SOURCE, what, outcome, received);
  const page = pageOf(json);
  if (!page) {
    return nationalUnavailable(SOURCE, 'bad_response', `${what} answered ${describeBody(outcome.body)}`);
  }
  const rows = page.data.filter((row) => cleanText(row.ic_dph)?.toUpperCase() === icDph);
  if (rows.length === 0 && page.data.length > 0) {
    return nationalUnavailable(SOURCE, 'bad_response', `${what} answered other numbers than ${icDph}`);
  }
  if (rows.length === 0 && page.pages > 1) {
    return nationalUnavailable(
      SOURCE,
      'bad_response',
      `${what} answered ${page.pages} pages without ${icDph}`,
    );
  }
  return { kind: 'rows', rows };
}

function isSearchMiss(json: unknown): boolean {
  if (!isRecord(json)) return false;
  const keys = Object.keys(json).sort();
  return (
    keys.join(',') === 'code,message,status' &&
    json.status === SK_SEARCH_MISS.status &&
    String(json.code) === SK_SEARCH_MISS.code &&
    json.message === SK_SEARCH_MISS.message
  );
}

interface SkPage {
  page: number;
  pages: number;
  itemsCount: number;
  data: Record<string, unknown>[];
}

/** The page envelope, checked: whole numbers, one page asked, no more rows than counted. */
function pageOf(json: unknown): SkPage | null {
  if (!isRecord(json) || !Array.isArray(json.data)) return null;
  const { page, pages, itemsCount } = json;
  if (!isCount(page) || !isCount(pages) || !isCount(itemsCount) || !isCount(json.itemsPerPage)) return null;
  if (page !== 1 || json.data.length > itemsCount || (itemsCount === 0) !== (json.data.length === 0)) {
    return null;
  }
  if (!json.data.every(isRecord)) return null;
  return { page, pages, itemsCount, data: json.data as Record<string, unknown>[] };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function secondList(failure: NationalUnavailable, list: SkList): NationalUnavailable {
  return { ...failure, message: `${failure.message}; without ${list} the answer is not given` };
}

function registeredAnswer(
  icDph: string,
  payer: Record<string, unknown>,
  grounds: Record<string, unknown>[],
  received: Date,
): NationalResult {
  const kind = cleanText(payer.druh_reg_dph);
  const identifiers: Record<string, string> = { icDph };
  const ico = cleanText(payer.ico);
  if (ico) identifiers.ico = ico;
  const registration: NationalRegistration = {
    from: dottedDay(payer.datum_reg) ?? dottedDay(payer.plat_dph_od),
    to: null,
    kind,
  };
  const flags: NationalFlag[] = grounds.map((row) => ({
    code: 'deregistration_grounds',
    since: dottedDay(row.dat_zverejnenia),
    registerValue: cleanText(row.rok_porusenia) ?? SK_CANCELLATION_GROUNDS,
  }));
  return nationalAnswer({
    source: SOURCE,
    country: 'SK',
    national: icDph.slice(2),
    valid: true,
    registerStatus: kind ?? SK_VAT_PAYERS,
    name: cleanText(payer.nazov_ds),
    address: nationalAddress({
      street: cleanText(payer.ulica_cislo),
      postcode: cleanText(payer.psc),
      city: cleanText(payer.obec),
      country: cleanText(payer.stat),
    }),
    identifiers,
    flags,
    registrations: [registration],
    checkedAt: received,
  });
}

function notRegisteredAnswer(icDph: string, deregistered: Record<string, unknown>[], received: Date) {
  const row = deregistered[0];
  const identifiers: Record<string, string> = { icDph };
  const ico = cleanText(row?.ico);
  if (ico) identifiers.ico = ico;
  return nationalAnswer({
    source: SOURCE,
    country: 'SK',
    national: icDph.slice(2),
    valid: false,
    registerStatus: row ? SK_DEREGISTERED : null,
    name: cleanText(row?.nazov),
    address: row
      ? nationalAddress({
          street: cleanText(row.adresa),
          postcode: cleanText(row.psc),
          city: cleanText(row.obec),
          country: null,
        })
      : null,
    identifiers,
    registrations: deregistered.map((entry) => ({
      from: null,
      to: dottedDay(entry.dat_vymazu),
      kind: SK_DEREGISTERED,
    })),
    checkedAt: received,
  });
}
