/**
 * Client of the European Commission's TEDB `VatRetrievalService` (`retrieveVatRates`): the VAT rates
 * the member states report, by day (`situationOn`) or over a range (`from`/`to`). SOAP 1.1,
 * document/literal, no key.
 *
 * The protocol's known traps, each handled here: the `SOAPAction` header is mandatory (without it the
 * service answers a bare 404 with an empty body); the request's children are in the `…:types`
 * namespace (a mistake there is fault `TEDB-ERR-2`); Greece is `EL`; dates carry an offset
 * (`2024-01-01+01:00`, the day is what counts); `additionalInformation` is empty for a query without
 * CN or CPA codes, so the member states answered are those the rows name. What the rows mean (regional rows, exempt rows at
 * 0.0, labels) is decided by the rates module, not here: this client returns the rows as sent.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { excerpt, type FetchFn, isRecord, looksLikeHtml, transportFor } from './http.js';

export const TEDB_DEFAULT_URL = 'https://ec.europa.eu/taxation_customs/tedb/ws/';
export const TEDB_SOAP_ACTION =
  'urn:ec.europa.eu:taxud:tedb:services:v1:VatRetrievalService/RetrieveVatRates';
const SERVICE_NS = 'urn:ec.europa.eu:taxud:tedb:services:v1:IVatRetrievalService';
const TYPES_NS = `${SERVICE_NS}:types`;

/** One `vatRateResults` row as TEDB sent it (the member state as an ISO code: `GR`, not `EL`). */
export interface TedbRateRow {
  /** ISO 3166 code, upper case (`EL` is returned as `GR`). */
  country: string;
  /** `STANDARD` or `REDUCED`. */
  type: string;
  /** `DEFAULT`, `REDUCED_RATE`, `SUPER_REDUCED_RATE`, `PARKING_RATE`, `NOT_APPLICABLE`, `OUT_OF_SCOPE`, `EXEMPTED`. */
  rateType: string;
  /** The percentage, or null when the row carries none. */
  value: number | null;
  /** The day the row's situation applies from, `YYYY-MM-DD` (the offset dropped). */
  situationOn: string;
  category: { identifier: string; description: string | null } | null;
  comment: string | null;
}

export type TedbOutcome =
  | {
      kind: 'rates';
      rows: TedbRateRow[];
      /**
       * The ISO codes of the member states the answer has rows for, in the order they first appear.
       * Read from the rows, not from `additionalInformation/countries`: the service leaves that
       * element empty (`<additionalInformation/>`) for a query without CN or CPA codes.
       */
      countries: string[];
    }
  | {
      kind: 'failure';
      /** `timeout`/`network`: no answer; `fault`: a SOAP fault; `bad_response`: not a usable answer. */
      reason: 'timeout' | 'network' | 'fault' | 'bad_response';
      message: string;
    };

export type TedbQuery =
  | { countries: readonly string[]; situationOn: string; signal?: AbortSignal }
  | { countries: readonly string[]; from: string; to: string; signal?: AbortSignal };

export interface TedbClient {
  retrieveVatRates(query: TedbQuery): Promise<TedbOutcome>;
}

export interface TedbClientOptions {
  url: string;
  timeoutMs: number;
  fetch?: FetchFn;
}

const parser = new XMLParser({
  ignoreAttributes: false,
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  isArray: (name) => ['vatRateResults', 'error'].includes(name),
});

/** ISO code → TEDB's member-state code, and back (Greece only). */
const toTedb = (iso: string) => (iso.toUpperCase() === 'GR' ? 'EL' : iso.toUpperCase());
const fromTedb = (code: string) => (code.toUpperCase() === 'EL' ? 'GR' : code.toUpperCase());

const DAY = /^(\d{4}-\d{2}-\d{2})(?:Z|[+-]\d{2}:\d{2})?$/;

function text(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (isRecord(value) && typeof value['#text'] === 'string') return value['#text'];
  return null;
}

export function buildTedbRequest(query: TedbQuery): string {
  const states = query.countries.map((c) => `<t:isoCode>${toTedb(c)}</t:isoCode>`).join('');
  const when =
    'situationOn' in query
      ? `<t:situationOn>${query.situationOn}</t:situationOn>`
      : `<t:from>${query.from}</t:from><t:to>${query.to}</t:to>`;
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:s="${SERVICE_NS}" xmlns:t="${TYPES_NS}">` +
    `<soapenv:Header/><soapenv:Body><s:retrieveVatRatesReqMsg><t:memberStates>${states}</t:memberStates>${when}` +
    '</s:retrieveVatRatesReqMsg></soapenv:Body></soapenv:Envelope>'
  );
}

/** Reads a `retrieveVatRates` answer; never throws. */
export function parseTedbResponse(status: number, body: string): TedbOutcome {
  const bad = (message: string): TedbOutcome => ({ kind: 'failure', reason: 'bad_response', message });
  if (body.trim() === '') return bad(`TEDB answered HTTP ${status} with an empty body`);
  if (looksLikeHtml(body)) return bad(`TEDB answered HTTP ${status} with an HTML page`);
  if (XMLValidator.validate(body) !== true) {
    return bad(`TEDB answered HTTP ${status} with something that is not XML: ${excerpt(body)}`);
  }
  let parsed: unknown;
  try {
    parsed = parser.parse(body);
  } catch {
    return bad(`TEDB answered unreadable XML: ${excerpt(body)}`);
  }
  const envelope = isRecord(parsed) ? parsed.Envelope : undefined;
  const soapBody = isRecord(envelope) ? envelope.Body : undefined;
  if (!isRecord(soapBody)) return bad(`TEDB answered XML that is not a SOAP envelope: ${excerpt(body)}`);
  if (soapBody.Fault !== undefined) {
    const fault = isRecord(soapBody.Fault) ? soapBody.Fault : {};
    const detail = isRecord(fault.detail) ? fault.detail : {};
    const errors = Object.values(detail).flatMap((value) => {
      const list = isRecord(value) && Array.isArray(value.error) ? value.error : [];
      return list.map((e) =>
        isRecord(e) ? `${text(e.code) ?? '?'} ${text(e.description) ?? ''}`.trim() : '',
      );
    });
    const what = errors.filter(Boolean).join('; ') || text(fault.faultstring) || 'no description';
    return { kind: 'failure', reason: 'fault', message: `TEDB answered a SOAP fault: ${excerpt(what, 200)}` };
  }
  const message = soapBody.retrieveVatRatesRespMsg;
  if (!isRecord(message)) return bad('TEDB answer has no retrieveVatRatesRespMsg element');
  const rows: TedbRateRow[] = [];
  const results = Array.isArray(message.vatRateResults) ? message.vatRateResults : [];
  for (const [index, result] of results.entries()) {
    if (!isRecord(result)) return bad(`TEDB row ${index + 1} is not an element`);
    const country = text(result.memberState);
    const type = text(result.type);
    const rate = isRecord(result.rate) ? result.rate : null;
    const rateType = rate ? text(rate.type) : null;
    const day = DAY.exec(text(result.situationOn)?.trim() ?? '');
    if (!country || !/^[A-Za-z]{2}$/.test(country) || !type || !rateType || !day?.[1]) {
      return bad(`TEDB row ${index + 1} lacks its member state, type, rate type or date`);
    }
    const rawValue = rate ? text(rate.value) : null;
    const value = rawValue === null || rawValue.trim() === '' ? null : Number(rawValue);
    if (value !== null && !(Number.isFinite(value) && value >= 0 && value <= 100)) {
      return bad(`TEDB row ${index + 1} has a rate that is not a percentage: ${excerpt(rawValue ?? '', 20)}`);
    }
    const category = isRecord(result.category) ? result.category : null;
    const identifier = category ? text(category.identifier) : null;
    rows.push({
      country: fromTedb(country),
      type: type.toUpperCase(),
      rateType: rateType.toUpperCase(),
      value,
      situationOn: day[1],
      category: identifier ? { identifier, description: text(category?.description) } : null,
      comment: text(result.comment),
    });
  }
  return { kind: 'rates', rows, countries: [...new Set(rows.map((row) => row.country))] };
}

export function createTedbClient(options: TedbClientOptions): TedbClient {
  const send = transportFor(options.fetch);

  function ask(query: TedbQuery) {
    return send({
      url: options.url,
      method: 'POST',
      headers: {
        'content-type': 'text/xml;charset=UTF-8',
        accept: 'text/xml',
        // Mandatory: without it TEDB answers a bare 404 with an empty body.
        soapaction: TEDB_SOAP_ACTION,
      },
      body: buildTedbRequest(query),
      timeoutMs: options.timeoutMs,
      // A year of rates for 27 states is a few hundred kB.
      maxBodyBytes: 16 * 1024 * 1024,
      ...(query.signal ? { signal: query.signal } : {}),
    });
  }

  return {
    async retrieveVatRates(query) {
      let outcome = await ask(query);
      // A connection that failed before any answer (a kept-alive one the service had just closed) is
      // tried once more: the query only reads.
      if (!outcome.ok && outcome.kind === 'network' && outcome.message.startsWith('network error'))
        outcome = await ask(query);
      if (!outcome.ok) {
        return {
          kind: 'failure',
          reason:
            outcome.kind === 'timeout' ? 'timeout' : outcome.kind === 'network' ? 'network' : 'bad_response',
          message: `TEDB: ${outcome.message}`,
        };
      }
      return parseTedbResponse(outcome.status, outcome.body);
    },
  };
}
