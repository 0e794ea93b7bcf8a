/**
 * VIES REST client (`POST /check-vat-number`) with a fallback to the SOAP `checkVatService` when
 * the REST API itself fails (network error, HTML/5xx page, unreadable body). The body is always
 * parsed: the `{actionSucceed:false, errorWrappers:[…]}` envelope arrives with 200 as well as 4xx/5xx.
 * An answer needs the documented `CheckVatResponse` (a 2xx body with `countryCode`, `vatNumber` of the
 * number asked and a boolean `valid`); any other body is unavailability, never `valid: false`.
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
import type { RegistryClient, RegistryLookup, RegistryResult, RegistryUnavailable } from './port.js';
import { sameNumber, VIES_COUNTRIES, viesCountry, viesError, viesNational } from './vies-common.js';
import { createViesSoapClient } from './vies-soap.js';

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
    const payload: Record<string, string> = { countryCode: country, vatNumber: national };
    if (request.requester) {
      payload.requesterMemberStateCode = viesCountry(request.requester.country);
      payload.requesterNumber = viesNational(request.requester);
    }
    const outcome = await send({
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(payload),
      timeoutMs: options.timeoutMs,
      ...(request.signal ? { signal: request.signal } : {}),
    });
    if (!outcome.ok) {
      const result = transportFailure('vies', 'VIES', outcome);
      // A timeout has used the time budget: answer it rather than wait again on SOAP.
      return outcome.kind === 'network' ? { kind: 'failed', result } : { kind: 'result', result };
    }
    const status = outcome.status;
    const json = parseJson(outcome.body);
    if (!isRecord(json)) {
      const what =
        outcome.body.trim() === ''
          ? 'an empty body'
          : looksLikeHtml(outcome.body)
            ? 'an HTML page'
            : json === undefined
              ? `unreadable JSON: ${excerpt(outcome.body)}`
              : 'JSON that is not an object';
      const reason = status >= 500 ? 'down' : 'bad_response';
      return {
        kind: 'failed',
        result: unavailable('vies', reason, `VIES answered HTTP ${status} with ${what}`),
      };
    }
    const error = errorFromEnvelope(json);
    if (error) return { kind: 'result', result: error };
    const validFlag = typeof json.valid === 'boolean' ? json.valid : undefined;
    if (validFlag === undefined) {
      const reason = status >= 500 ? 'down' : 'bad_response';
      return {
        kind: 'failed',
        result: unavailable(
          'vies',
          reason,
          `VIES answered HTTP ${status} without a valid flag: ${excerpt(outcome.body)}`,
        ),
      };
    }
    if (status < 200 || status >= 300) {
      return {
        kind: 'failed',
        result: unavailable('vies', status >= 500 ? 'down' : 'bad_response', `VIES answered HTTP ${status}`),
      };
    }
    if (typeof json.countryCode !== 'string' || typeof json.vatNumber !== 'string') {
      return {
        kind: 'failed',
        result: unavailable(
          'vies',
          'bad_response',
          `VIES answered HTTP ${status} without the number it checked: ${excerpt(outcome.body)}`,
        ),
      };
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
    const received = now();
    return {
      kind: 'result',
      result: {
        kind: 'answer',
        source: 'vies',
        valid: validFlag,
        name: cleanText(json.name),
        address: cleanText(json.address),
        consultationNumber: request.requester ? cleanText(json.requestIdentifier) : null,
        checkedAt: parseDate(json.requestDate, received),
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
