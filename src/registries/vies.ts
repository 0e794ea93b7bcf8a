/**
 * VIES REST client (`POST /check-vat-number`) with a fallback to the SOAP `checkVatService` when
 * the REST API itself fails (network error, HTML/5xx page, unreadable body). The body is always
 * parsed: the `{actionSucceed:false, errorWrappers:[…]}` envelope arrives with 200 as well as 4xx/5xx.
 * An answer needs the documented `CheckVatResponse` (a 2xx body with `countryCode`, `vatNumber` of the
 * number asked and a boolean `valid`); any other body is unavailability, never `valid: false`.
 * Trader fields given in the lookup are sent (`traderName`, …) and the answer's `trader*Match`
 * verdicts for them come back as `traderMatch`.
 */
import {
  cleanText,
  excerpt,
  type FetchFn,
  isRecord,
  joinUrl,
  looksLikeHtml,
  parseDate,
  parseJson,
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
import { sameNumber, VIES_COUNTRIES, viesCountry, viesError, viesNational } from './vies-common.js';
import { createViesSoapClient } from './vies-soap.js';
import { REST_TRADER_NAMES, readTraderMatch, traderFields } from './vies-trader.js';

export { VIES_COUNTRIES, VIES_ERROR_CODES } from './vies-common.js';

export interface ViesClientOptions {
  /** REST base, e.g. `https://ec.europa.eu/taxation_customs/vies/rest-api`. */
  baseUrl: string;
  /** SOAP endpoint used when the REST API fails, e.g. `https://ec.europa.eu/taxation_customs/vies/services/checkVatService`. */
  soapUrl?: string;
  /** Per upstream attempt (the SOAP fallback gets its own). */
  timeoutMs: number;
  fetch?: FetchFn;
  now?: () => Date;
}

/** The REST API failed as a transport (not a VIES answer): worth trying SOAP. */
type RestOutcome =
  | { kind: 'result'; result: RegistryResult }
  | { kind: 'failed'; result: RegistryUnavailable };

export function createViesClient(options: ViesClientOptions): RegistryClient {
  const send = transportFor(options.fetch);
  const now = options.now ?? (() => new Date());
  const soap = options.soapUrl
    ? createViesSoapClient({
        url: options.soapUrl,
        timeoutMs: options.timeoutMs,
        ...(options.fetch ? { fetch: options.fetch } : {}),
        now,
      })
    : undefined;
  const url = joinUrl(options.baseUrl, '/check-vat-number');

  async function rest(request: RegistryLookup): Promise<RestOutcome> {
    const country = viesCountry(request.vat.country);
    const national = viesNational(request.vat);
    const sent = traderFields(request.trader);
    const outcome = await send({
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(restPayload(request, country, national, sent)),
      timeoutMs: options.timeoutMs,
      ...(request.signal ? { signal: request.signal } : {}),
    });
    if (!outcome.ok) {
      const result = transportFailure('vies', 'VIES', outcome);
      // A timeout has used the time budget: answer it rather than wait again on SOAP.
      return outcome.kind === 'network' ? { kind: 'failed', result } : { kind: 'result', result };
    }
    const body = readBody(outcome.status, outcome.body);
    if (body.kind !== 'json') return body.outcome;
    const checked = checkedNumber(outcome.status, outcome.body, body.json, country, national);
    if (checked) return checked;
    const json = body.json;
    const traderMatch = readTraderMatch(sent, (field) => json[`${REST_TRADER_NAMES[field]}Match`]);
    const received = now();
    return {
      kind: 'result',
      result: {
        kind: 'answer',
        source: 'vies',
        valid: json.valid === true,
        name: cleanText(json.name),
        address: cleanText(json.address),
        consultationNumber: request.requester ? cleanText(json.requestIdentifier) : null,
        checkedAt: parseDate(json.requestDate, received),
        ...(traderMatch ? { traderMatch } : {}),
      },
    };
  }

  async function lookup(request: RegistryLookup): Promise<RegistryResult> {
    const first = await rest(request);
    if (first.kind === 'result' || !soap || request.signal?.aborted) return first.result;
    const fallback = await soap.lookup(request);
    if (fallback.kind === 'answer') return fallback;
    return { ...fallback, message: `${fallback.message}; REST before it: ${first.result.message}` };
  }

  return { source: 'vies', countries: VIES_COUNTRIES, lookup };
}

/** The request body: the number, the requester and the trader fields given. */
function restPayload(
  request: RegistryLookup,
  country: string,
  national: string,
  sent: readonly [RegistryTraderField, string][],
): Record<string, string> {
  const payload: Record<string, string> = { countryCode: country, vatNumber: national };
  if (request.requester) {
    payload.requesterMemberStateCode = viesCountry(request.requester.country);
    payload.requesterNumber = viesNational(request.requester);
  }
  for (const [field, value] of sent) payload[REST_TRADER_NAMES[field]] = value;
  return payload;
}

type BodyReading = { kind: 'json'; json: Record<string, unknown> } | { kind: 'done'; outcome: RestOutcome };

/** The body as a JSON object, or what a body that is none (or a VIES error) means. */
function readBody(status: number, text: string): BodyReading {
  const json = parseJson(text);
  if (!isRecord(json)) {
    const what =
      text.trim() === ''
        ? 'an empty body'
        : looksLikeHtml(text)
          ? 'an HTML page'
          : json === undefined
            ? `unreadable JSON: ${excerpt(text)}`
            : 'JSON that is not an object';
    const reason = status >= 500 ? 'down' : 'bad_response';
    return {
      kind: 'done',
      outcome: {
        kind: 'failed',
        result: unavailable('vies', reason, `VIES answered HTTP ${status} with ${what}`),
      },
    };
  }
  const error = errorFromEnvelope(json);
  if (error) return { kind: 'done', outcome: { kind: 'result', result: error } };
  return { kind: 'json', json };
}

/**
 * Why a JSON body is not the `CheckVatResponse` for the number asked (no valid flag, a non-2xx
 * status, no number, another number), or `undefined` when it is.
 */
function checkedNumber(
  status: number,
  text: string,
  json: Record<string, unknown>,
  country: string,
  national: string,
): RestOutcome | undefined {
  const failed = (reason: 'down' | 'bad_response', message: string): RestOutcome => ({
    kind: 'failed',
    result: unavailable('vies', reason, message),
  });
  const serverSide = status >= 500 ? 'down' : 'bad_response';
  if (typeof json.valid !== 'boolean') {
    return failed(serverSide, `VIES answered HTTP ${status} without a valid flag: ${excerpt(text)}`);
  }
  if (status < 200 || status >= 300) return failed(serverSide, `VIES answered HTTP ${status}`);
  if (typeof json.countryCode !== 'string' || typeof json.vatNumber !== 'string') {
    return failed(
      'bad_response',
      `VIES answered HTTP ${status} without the number it checked: ${excerpt(text)}`,
    );
  }
  if (json.countryCode.toUpperCase() !== country || !sameNumber(json.vatNumber, country, national)) {
    return {
      kind: 'result',
      result: unavailable(
        'vies',
        'bad_response',
        `VIES answered for ${String(json.countryCode)}${String(json.vatNumber)} instead of ${country}${national}`,
      ),
    };
  }
  return undefined;
}

/**
 * The VIES error in a JSON body: the `CommonResponse` envelope (`actionSucceed:false`,
 * `errorWrappers`), or the web-UI shape's `userError` when it is not `VALID`/`INVALID`.
 */
function errorFromEnvelope(json: Record<string, unknown>): RegistryUnavailable | undefined {
  const wrappers = Array.isArray(json.errorWrappers) ? json.errorWrappers : [];
  const first = wrappers.find(isRecord);
  if (first && typeof first.error === 'string' && first.error.trim() !== '') {
    return viesError(first.error.trim(), typeof first.message === 'string' ? first.message : undefined);
  }
  if (json.actionSucceed === false) {
    return unavailable('vies', 'down', 'VIES reported a failed action without an error code');
  }
  if (typeof json.userError === 'string' && !['VALID', 'INVALID', ''].includes(json.userError)) {
    return viesError(json.userError);
  }
  return undefined;
}
