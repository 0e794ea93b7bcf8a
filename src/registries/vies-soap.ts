/**
 * VIES SOAP client (`checkVatService`): `checkVat`, or `checkVatApprox` when a requester or trader
 * fields are given (the only SOAP operation that returns a `requestIdentifier` and the trader
 * match verdicts, `traderNameMatch`…, read as `traderMatch`). Faults arrive with HTTP 200 or 500
 * and carry the VIES code in `faultstring`; the body is parsed whatever the status. An answer needs
 * a 2xx status and the operation's response element with `countryCode`, `vatNumber` (the number
 * asked) and `valid`; any other body (an HTML page, another envelope) is unavailability, never
 * `valid: false`.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import {
  cleanText,
  excerpt,
  type FetchFn,
  isRecord,
  looksLikeHtml,
  notAhead,
  parseDate,
  transportFailure,
  transportFor,
  unavailable,
} from './http.js';
import type {
  RegistryClient,
  RegistryLookup,
  RegistryResult,
  RegistryTraderField,
  RegistryUnavailable,
} from './port.js';
import {
  findViesCode,
  sameNumber,
  VIES_COUNTRIES,
  viesCountry,
  viesError,
  viesNational,
} from './vies-common.js';
import { readTraderMatch, SOAP_COMPANY_TYPE, SOAP_TRADER_NAMES, traderFields } from './vies-trader.js';

export interface ViesSoapClientOptions {
  /** The service endpoint, e.g. `https://ec.europa.eu/taxation_customs/vies/services/checkVatService`. */
  url: string;
  timeoutMs: number;
  fetch?: FetchFn;
  now?: () => Date;
}

const TYPES_NS = 'urn:ec.europa.eu:taxud:vies:services:checkVat:types';

const parser = new XMLParser({
  ignoreAttributes: false,
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
});

export type SoapParse =
  | { kind: 'body'; body: Record<string, unknown> }
  | { kind: 'fault'; faultcode: string; faultstring: string; detail: unknown }
  | { kind: 'not_soap'; message: string };

/** Parses a SOAP 1.1 envelope (any prefixes); never throws. */
export function parseSoapEnvelope(text: string): SoapParse {
  if (text.trim() === '') return { kind: 'not_soap', message: 'empty body' };
  if (XMLValidator.validate(text) !== true) {
    return { kind: 'not_soap', message: `not well-formed XML: ${excerpt(text)}` };
  }
  let parsed: unknown;
  try {
    parsed = parser.parse(text);
  } catch {
    return { kind: 'not_soap', message: `unreadable XML: ${excerpt(text)}` };
  }
  const envelope = isRecord(parsed) ? parsed.Envelope : undefined;
  const body = isRecord(envelope) ? envelope.Body : undefined;
  if (!isRecord(body)) return { kind: 'not_soap', message: `not a SOAP envelope: ${excerpt(text)}` };
  const fault = body.Fault;
  if (fault !== undefined) {
    const record = isRecord(fault) ? fault : {};
    return {
      kind: 'fault',
      faultcode: xmlText(record.faultcode) ?? '',
      faultstring: xmlText(record.faultstring) ?? '',
      detail: record.detail,
    };
  }
  return { kind: 'body', body };
}

/** Text content of a parsed element: `null` for missing, nil or structured elements. */
export function xmlText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (isRecord(value)) {
    if (value['@_nil'] === 'true' || value['@_nil'] === '1') return null;
    const text = value['#text'];
    if (typeof text === 'string') return text;
    if (Object.keys(value).every((key) => key.startsWith('@_'))) return '';
  }
  return null;
}

export function escapeXml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/**
 * SOAP `xsd:date` with offset (`2022-08-15+02:00`) → the check time: `now` when now falls on that
 * day (the service only gives the day), else the start of that day, unless that day is still to
 * come (then `now`: a date ahead is not the time of this check).
 */
export function parseSoapDate(value: string | null, now: Date): Date {
  if (!value) return now;
  const match = /^(\d{4}-\d{2}-\d{2})(Z|[+-]\d{2}:\d{2})?$/.exec(value.trim());
  if (!match) return parseDate(value, now);
  const start = Date.parse(`${match[1]}T00:00:00${match[2] ?? 'Z'}`);
  if (Number.isNaN(start)) return now;
  const nowMs = now.getTime();
  return nowMs >= start && nowMs < start + 86_400_000 ? now : notAhead(new Date(start), now);
}

function buildEnvelope(operation: string, fields: [string, string][]): string {
  const inner = fields.map(([name, value]) => `<urn:${name}>${escapeXml(value)}</urn:${name}>`).join('');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:urn="${TYPES_NS}">` +
    `<soapenv:Header/><soapenv:Body><urn:${operation}>${inner}</urn:${operation}></soapenv:Body></soapenv:Envelope>`
  );
}

/** Maps a SOAP fault from VIES. */
export function viesSoapFault(faultcode: string, faultstring: string): RegistryUnavailable {
  const code = findViesCode(faultstring);
  if (code) return viesError(code);
  if (/client/i.test(faultcode)) {
    return unavailable('vies', 'rejected', `VIES SOAP rejected the request: ${excerpt(faultstring, 160)}`, {
      upstreamCode: faultstring.trim() || faultcode,
    });
  }
  return unavailable('vies', 'down', `VIES SOAP fault: ${excerpt(faultstring || faultcode, 160)}`, {
    upstreamCode: faultstring.trim() || faultcode,
  });
}

/** The trader fields sent: the non-blank ones, the company type only in its coded form. */
function soapTraderFields(request: RegistryLookup): [RegistryTraderField, string][] {
  return traderFields(request.trader).filter(
    ([field, value]) => field !== 'companyType' || SOAP_COMPANY_TYPE.test(value),
  );
}

/** The operation's elements in the WSDL's sequence: number, trader fields, requester. */
function requestFields(
  request: RegistryLookup,
  country: string,
  national: string,
  sent: readonly [RegistryTraderField, string][],
): [string, string][] {
  const fields: [string, string][] = [
    ['countryCode', country],
    ['vatNumber', national],
  ];
  for (const [field, value] of sent) fields.push([SOAP_TRADER_NAMES[field], value]);
  if (request.requester) {
    fields.push(['requesterCountryCode', viesCountry(request.requester.country)]);
    fields.push(['requesterVatNumber', viesNational(request.requester)]);
  }
  return fields;
}

/** The operation's response element for the number asked, or why there is none. */
function readAnswer(
  status: number,
  body: string,
  operation: string,
  country: string,
  national: string,
): { kind: 'element'; answer: Record<string, unknown> } | RegistryUnavailable {
  const parsed = parseSoapEnvelope(body);
  if (parsed.kind === 'fault') return viesSoapFault(parsed.faultcode, parsed.faultstring);
  if (parsed.kind === 'not_soap') {
    const what = looksLikeHtml(body) ? 'an HTML page' : parsed.message;
    return unavailable(
      'vies',
      status >= 500 ? 'down' : 'bad_response',
      `VIES SOAP answered HTTP ${status} with ${what}`,
    );
  }
  const answer = parsed.body[`${operation}Response`];
  if (!isRecord(answer)) {
    return unavailable('vies', 'bad_response', `VIES SOAP answer has no ${operation}Response element`);
  }
  const valid = xmlText(answer.valid);
  if (valid !== 'true' && valid !== 'false') {
    return unavailable('vies', 'bad_response', 'VIES SOAP answer has no valid flag');
  }
  if (status < 200 || status >= 300) {
    return unavailable(
      'vies',
      status >= 500 ? 'down' : 'bad_response',
      `VIES SOAP answered HTTP ${status} with a ${operation}Response`,
    );
  }
  const answeredCountry = xmlText(answer.countryCode);
  const answeredNumber = xmlText(answer.vatNumber);
  if (answeredCountry === null || answeredNumber === null) {
    return unavailable('vies', 'bad_response', 'VIES SOAP answer does not name the number it checked');
  }
  if (answeredCountry.toUpperCase() !== country || !sameNumber(answeredNumber, country, national)) {
    return unavailable(
      'vies',
      'bad_response',
      `VIES SOAP answered for ${answeredCountry}${answeredNumber} instead of ${country}${national}`,
    );
  }
  return { kind: 'element', answer };
}

/**
 * The registered name of an answer. `checkVatApprox` answers a member state that does not disclose
 * the name with the name that was sent (a Spanish answer: infiniteloopltd/CheckVatNumberSpain
 * `README.md`): a `traderName` equal to the one sent is no evidence of the registered name, so it
 * is read as none (the state's `traderNameMatch` still says whether it matched).
 */
function registeredName(value: unknown, sent: readonly [RegistryTraderField, string][]): string | null {
  const name = cleanText(xmlText(value));
  const sentName = sent.find(([field]) => field === 'name')?.[1];
  return name !== null && sentName !== undefined && name === sentName ? null : name;
}

export function createViesSoapClient(options: ViesSoapClientOptions): RegistryClient {
  const send = transportFor(options.fetch);
  const now = options.now ?? (() => new Date());

  async function lookup(request: RegistryLookup): Promise<RegistryResult> {
    const country = viesCountry(request.vat.country);
    const national = viesNational(request.vat);
    const sent = soapTraderFields(request);
    const approx = request.requester !== undefined || sent.length > 0;
    const operation = approx ? 'checkVatApprox' : 'checkVat';
    const outcome = await send({
      url: options.url,
      method: 'POST',
      headers: { 'content-type': 'text/xml;charset=UTF-8', accept: 'text/xml', soapaction: '' },
      body: buildEnvelope(operation, requestFields(request, country, national, sent)),
      timeoutMs: options.timeoutMs,
      ...(request.signal ? { signal: request.signal } : {}),
    });
    if (!outcome.ok) return transportFailure('vies', 'VIES SOAP', outcome);
    const read = readAnswer(outcome.status, outcome.body, operation, country, national);
    if (read.kind !== 'element') return read;
    const answer = read.answer;
    const traderMatch = readTraderMatch(sent, (field) => xmlText(answer[`${SOAP_TRADER_NAMES[field]}Match`]));
    const received = now();
    return {
      kind: 'answer',
      source: 'vies',
      valid: xmlText(answer.valid) === 'true',
      name: registeredName(approx ? answer.traderName : answer.name, sent),
      address: cleanText(xmlText(approx ? answer.traderAddress : answer.address)),
      consultationNumber: request.requester ? cleanText(xmlText(answer.requestIdentifier)) : null,
      checkedAt: parseSoapDate(xmlText(answer.requestDate), received),
      ...(traderMatch ? { traderMatch } : {}),
    };
  }

  return { source: 'vies', countries: VIES_COUNTRIES, lookup };
}
