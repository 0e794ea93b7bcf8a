/**
 * The Commission's EOS EORI validation service: SOAP 1.1, document/literal, operation
 * `validateEORI` in `http://eori.ws.eos.dds.s/` with one qualified `<eori>` per number, up to 10 in
 * one request. Its WSDL binds the operation with `soapAction=""`, so the header is sent empty (the
 * JAX-WS client generated from it, SystemaAS/syjservicestn-expft,
 * src/com/eori/validation/soap/ws/client/generated/EORIValidation.java and ValidateEORI.java).
 *
 * The answer (`validateEORIResponse/return`, type `eoriValidationResult`: `requestDate` as a
 * string, an optional `errorDescription`, then one `result` per number of type `eoriResponse`:
 * `eori`, `status`, `statusDescr`, and optional `errorReason`, `name`, `address`, `street`,
 * `postalCode`, `city`, `country`; EoriValidationResult.java and EoriResponse.java there) comes
 * from a WebLogic JAX-WS endpoint as
 * `<S:Envelope><S:Body><ns0:validateEORIResponse><return><requestDate>25/06/2024</requestDate>
 * <result><eori>…</eori><status>1</status><statusDescr>Not valid</statusDescr></result>…`
 * (a recorded answer in annuaire-entreprises-data-gouv-fr/api-proxy, src/clients/eori/index.ts).
 *
 * Only a 2xx `validateEORIResponse` with a `result` for the number, status `0` (valid) or `1`
 * (not valid), no `errorReason` and a `statusDescr` that does not say otherwise is an answer.
 * A SOAP fault, an `errorDescription`, an HTML page, another shape, a timeout or throttling leaves
 * every number of the request unavailable; a number missing from the answer is unavailable alone.
 */

import {
  type EoriCheckRequest,
  type EoriClient,
  type EoriFailure,
  type EoriRequestSteps,
  type EoriResult,
  type EoriTrader,
  eoriUnavailable,
  inChunks,
  requestOnce,
} from './eori-port.js';
import {
  cleanText,
  excerpt,
  type FetchFn,
  type HttpResponse,
  isRecord,
  looksLikeHtml,
  retryAfterSeconds,
  transportFor,
} from './http.js';
import { escapeXml, parseSoapDate, parseSoapEnvelope, xmlText } from './vies-soap.js';

export interface EosClientOptions {
  /** The endpoint, e.g. `https://ec.europa.eu/taxation_customs/dds2/eos/validation/services/validation`. */
  url: string;
  /** Per upstream request. */
  timeoutMs: number;
  fetch?: FetchFn;
  now?: () => Date;
  /** Larger answers are not read (default: the registry clients' cap). */
  maxBodyBytes?: number;
}

export const EOS_NAMESPACE = 'http://eori.ws.eos.dds.s/';
export const EOS_MAX_PER_REQUEST = 10;

/** The member states by their ISO codes (Greece `GR`, as EORI numbers carry it) and `XI`. */
export const EOS_COUNTRIES: readonly string[] = Object.freeze(
  'AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK XI'.split(' '),
);
const COUNTRY_SET = new Set(EOS_COUNTRIES);

/** What is sent: a member state's (or XI's) code and 1 to 15 letters and digits. */
const SENDABLE = /^[A-Z]{2}[0-9A-Z]{1,15}$/;

const LABEL = 'EOS';

/** Why a number is not sent to EOS, or `undefined` when it may be. */
export function eosRefusal(eori: string): string | undefined {
  if (eori.startsWith('GB')) return `not sent to EOS: ${eori} is a GB number, which HMRC checks`;
  if (!SENDABLE.test(eori) || !COUNTRY_SET.has(eori.slice(0, 2))) {
    return `not sent to EOS: "${eori}" is not an EU or XI EORI number (a country code and 1 to 15 letters and digits)`;
  }
  return undefined;
}

/** The request envelope, every number a qualified `<eori>` child as the schema requires. */
export function validateEoriEnvelope(eoris: readonly string[]): string {
  const children = eoris.map((eori) => `<eos:eori>${escapeXml(eori)}</eos:eori>`).join('');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:eos="${EOS_NAMESPACE}">` +
    `<soapenv:Header/><soapenv:Body><eos:validateEORI>${children}</eos:validateEORI></soapenv:Body></soapenv:Envelope>`
  );
}

const brusselsOffset = new Intl.DateTimeFormat('en-US', {
  timeZone: 'Europe/Brussels',
  timeZoneName: 'longOffset',
});

/**
 * `requestDate` → the time of the check. EOS gives the day only, as `dd/MM/yyyy` (`25/06/2024`),
 * on Brussels time: `now` when now falls on that day, else the start of that day, never a moment
 * ahead of `now`. An `xsd:date` or ISO form is read as such; anything else is `now`.
 */
export function parseEosDate(value: string | null, now: Date): Date {
  if (!value) return now;
  const match = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(value.trim());
  if (!match) return parseSoapDate(value, now);
  const day = `${match[3]}-${match[2]}-${match[1]}`;
  const noon = new Date(`${day}T12:00:00Z`);
  // Date.parse rolls 31/02 over into March; such a day is no date.
  if (Number.isNaN(noon.getTime()) || noon.toISOString().slice(0, 10) !== day) return now;
  const zone = brusselsOffset.formatToParts(noon).find((part) => part.type === 'timeZoneName')?.value;
  const offset = (zone ?? 'GMT').replace('GMT', '') || '+00:00';
  return parseSoapDate(`${day}${offset}`, now);
}

/** A SOAP fault: the client's fault (`S:Client`) is a refusal retrying will not fix; the rest is the service's. */
function faultFailure(faultcode: string, faultstring: string): EoriFailure {
  const upstreamCode = faultcode || 'Fault';
  const text = excerpt(faultstring || faultcode, 160);
  if (/(^|:)client$/i.test(faultcode)) {
    return { reason: 'rejected', message: `EOS refused the request: ${text}`, upstreamCode };
  }
  return { reason: 'down', message: `EOS answered with a SOAP fault: ${text}`, upstreamCode };
}

/** A body that is not a SOAP envelope, by status. */
function notSoapFailure(response: HttpResponse, what: string, now: Date): EoriFailure {
  const status = response.status;
  if (status === 429) {
    const retryAfter = retryAfterSeconds(response.headers, now);
    return {
      reason: 'throttled',
      message: `EOS throttled the request (HTTP 429) with ${what}`,
      ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
    };
  }
  if (status === 504) return { reason: 'timeout', message: `EOS gateway timed out (HTTP 504) with ${what}` };
  if (status >= 500) return { reason: 'down', message: `EOS answered HTTP ${status} with ${what}` };
  return { reason: 'bad_response', message: `EOS answered HTTP ${status} with ${what}` };
}

function toArray(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

function canonical(value: unknown): string | null {
  const text = xmlText(value);
  return text === null ? null : text.replace(/\s+/g, '').toUpperCase();
}

/**
 * The published trader, or `null` when EOS gave no name and no address. The one-line `address`
 * the schema also has stands in for the street when no `street` is given.
 */
function traderOf(result: Record<string, unknown>): EoriTrader | null {
  const field = (name: string) => cleanText(xmlText(result[name]));
  const trader: EoriTrader = {
    name: field('name'),
    street: field('street') ?? field('address'),
    postalCode: field('postalCode'),
    city: field('city'),
    country: field('country'),
  };
  return Object.values(trader).some((value) => value !== null) ? trader : null;
}

/** One `result` element for the number asked, as an answer or as why it is not one. */
function readResult(eori: string, result: Record<string, unknown>, checkedAt: Date): EoriResult {
  const errorReason = cleanText(xmlText(result.errorReason));
  if (errorReason !== null) {
    return eoriUnavailable('eos', eori, {
      reason: 'down',
      message: `EOS could not check ${eori}: ${excerpt(errorReason, 160)}`,
      upstreamCode: 'errorReason',
    });
  }
  const status = xmlText(result.status)?.trim();
  const description = cleanText(xmlText(result.statusDescr));
  if (status !== '0' && status !== '1') {
    return eoriUnavailable('eos', eori, {
      reason: 'bad_response',
      message: `EOS answered ${eori} with status ${status === undefined ? '(none)' : `"${excerpt(status, 20)}"`}, which is neither 0 (valid) nor 1 (not valid)`,
    });
  }
  const saysNotValid = description !== null && /^not\b/i.test(description);
  const saysValid = description !== null && /^valid$/i.test(description);
  if ((status === '0' && saysNotValid) || (status === '1' && saysValid)) {
    return eoriUnavailable('eos', eori, {
      reason: 'bad_response',
      message: `EOS answered ${eori} with status ${status} but "${excerpt(description ?? '', 40)}"`,
    });
  }
  const valid = status === '0';
  return {
    kind: 'answer',
    source: 'eos',
    eori,
    valid,
    trader: valid ? traderOf(result) : null,
    checkedAt,
    upstreamStatus: description ? `${status} ${description}` : status,
  };
}

/**
 * Reads one EOS answer for the numbers sent: a result per number, or the same unavailability for
 * every one of them when the request as a whole failed.
 */
export function readEosAnswer(
  response: HttpResponse,
  eoris: readonly string[],
  now: Date,
): Map<string, EoriResult> {
  const all = (failure: EoriFailure) =>
    new Map(eoris.map((eori) => [eori, eoriUnavailable('eos', eori, failure)] as const));
  const parsed = parseSoapEnvelope(response.body);
  if (parsed.kind === 'fault') return all(faultFailure(parsed.faultcode, parsed.faultstring));
  if (parsed.kind === 'not_soap') {
    return all(notSoapFailure(response, looksLikeHtml(response.body) ? 'an HTML page' : parsed.message, now));
  }
  const answer = parsed.body.validateEORIResponse;
  const ret = isRecord(answer) ? answer.return : undefined;
  if (!isRecord(ret)) {
    return all(
      notSoapFailure(
        response,
        `a SOAP body without validateEORIResponse/return: ${excerpt(response.body)}`,
        now,
      ),
    );
  }
  if (response.status < 200 || response.status >= 300) {
    return all(notSoapFailure(response, 'a validateEORIResponse', now));
  }
  const errorDescription = cleanText(xmlText(ret.errorDescription));
  if (errorDescription !== null) {
    return all({
      reason: 'down',
      message: `EOS did not check the numbers: ${excerpt(errorDescription, 160)}`,
      upstreamCode: 'errorDescription',
    });
  }
  const checkedAt = parseEosDate(xmlText(ret.requestDate), now);
  const byNumber = new Map<string, Record<string, unknown>>();
  for (const result of toArray(ret.result)) {
    if (!isRecord(result)) continue;
    const eori = canonical(result.eori);
    if (eori !== null && !byNumber.has(eori)) byNumber.set(eori, result);
  }
  return new Map(
    eoris.map((eori) => {
      const result = byNumber.get(eori);
      const outcome = result
        ? readResult(eori, result, checkedAt)
        : eoriUnavailable('eos', eori, {
            reason: 'bad_response',
            message: `EOS answered without a result for ${eori}`,
          });
      return [eori, outcome] as const;
    }),
  );
}

export function createEosClient(options: EosClientOptions): EoriClient {
  const transport = transportFor(options.fetch);
  const now = options.now ?? (() => new Date());

  function send(eoris: string[], signal: AbortSignal | undefined) {
    return transport({
      url: options.url,
      method: 'POST',
      headers: { 'content-type': 'text/xml;charset=UTF-8', accept: 'text/xml', soapaction: '' },
      body: validateEoriEnvelope(eoris),
      timeoutMs: options.timeoutMs,
      ...(signal ? { signal } : {}),
      ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
    });
  }

  function check(checkRequest: EoriCheckRequest): Promise<EoriResult[]> {
    const steps: EoriRequestSteps = {
      source: 'eos',
      label: LABEL,
      refusal: eosRefusal,
      send: (eoris) => send(eoris, checkRequest.signal),
      read: (response, eoris) => readEosAnswer(response, eoris, now()),
    };
    return inChunks('eos', checkRequest, EOS_MAX_PER_REQUEST, (eoris) => requestOnce(steps, eoris));
  }

  return { source: 'eos', perRequest: EOS_MAX_PER_REQUEST, check };
}
