/**
 * HMRC's "Check an EORI number" API v1.0: `POST {base}/customs/eori/lookup/check-multiple-eori`
 * with `{"eoris": [...]}`, 1 to 10 GB numbers, `Accept: application/vnd.hmrc.1.0+json` (the
 * platform answers 406 without it), no authorisation (the API's definition gives it `PUBLIC`
 * access and its OpenAPI file an empty security requirement: hmrc/check-eori-number-api,
 * app/views/definition.scala.txt and public/api/conf/1.0/application.yaml).
 *
 * One number outside `^(GB|XI)[0-9]{12,15}$`, an XI number, no number or more than 10 fail the
 * whole request with 400 (EoriController.scala there), so the client sends only numbers matching
 * `^GB[0-9]{12,15}$` and answers the others itself, saying why, without sending them.
 *
 * The answer is a list of `{eori, valid, companyDetails?, processingDate}` (models/CheckResponse.scala):
 * `companyDetails` is `{traderName, address: {streetAndNumber, cityName, postcode}}` and present only
 * when HMRC has both a name and an address the trader agreed to share (the backend drops it when
 * either is missing, and gives `postcode: ""` for an address without one: hmrc/check-eori-number,
 * app/uk/gov/hmrc/checkeorinumber/connectors/EISConnector.scala); `processingDate` is
 * `yyyy-MM-dd'T'HH:mm:ssxxx` on London time (`2021-01-05T09:54:08+00:00`).
 *
 * Only a 200 list with an item for the number and a boolean `valid` is an answer. Any other status
 * or body leaves every number of the request unavailable; a number missing from the list is
 * unavailable alone.
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
  joinUrl,
  looksLikeHtml,
  parseDate,
  parseJson,
  retryAfterSeconds,
  transportFor,
} from './http.js';

export interface HmrcEoriClientOptions {
  /** API base, e.g. `https://api.service.hmrc.gov.uk` (sandbox `https://test-api.service.hmrc.gov.uk`). */
  baseUrl: string;
  /** Per upstream request. */
  timeoutMs: number;
  fetch?: FetchFn;
  now?: () => Date;
  /** Larger answers are not read (default: the registry clients' cap). */
  maxBodyBytes?: number;
}

export const HMRC_EORI_ACCEPT = 'application/vnd.hmrc.1.0+json';
export const HMRC_EORI_PATH = '/customs/eori/lookup/check-multiple-eori';
export const HMRC_EORI_MAX_PER_REQUEST = 10;
/** HMRC's documented pattern for the numbers it checks. */
export const HMRC_EORI_PATTERN = /^GB[0-9]{12,15}$/;

const LABEL = 'HMRC EORI';

/** Why a number is not sent to HMRC, or `undefined` when it may be. */
export function hmrcEoriRefusal(eori: string): string | undefined {
  if (HMRC_EORI_PATTERN.test(eori)) return undefined;
  if (eori.startsWith('XI')) {
    return `not sent to HMRC: ${eori} is an XI number, which HMRC refuses and the Commission's EOS checks`;
  }
  return `not sent to HMRC: "${eori}" does not match ^GB[0-9]{12,15}$, and one such number would fail the whole request`;
}

/** The error's code and message: HMRC's `{code, message}`, the platform's `{statusCode, message}`, or plain text. */
function errorOf(response: HttpResponse): { code?: string; message: string } {
  const json = parseJson(response.body);
  if (isRecord(json)) {
    const code = typeof json.code === 'string' && json.code !== '' ? json.code : undefined;
    const message = typeof json.message === 'string' ? json.message : excerpt(response.body);
    return code ? { code, message: excerpt(message, 200) } : { message: excerpt(message, 200) };
  }
  if (looksLikeHtml(response.body)) return { message: 'an HTML page' };
  return { message: excerpt(response.body, 200) };
}

/** Every status but a 200 list: why the whole request has no answer. */
function statusFailure(response: HttpResponse, now: Date): EoriFailure {
  const status = response.status;
  const { code, message } = errorOf(response);
  const detail = `HTTP ${status}${code ? ` ${code}` : ''}: ${message}`;
  const upstreamCode = code ?? `HTTP_${status}`;
  if (status === 429) {
    const retryAfter = retryAfterSeconds(response.headers, now);
    return {
      reason: 'throttled',
      message: `HMRC throttled the request (${detail})`,
      upstreamCode,
      ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
    };
  }
  if (status === 504)
    return { reason: 'timeout', message: `HMRC gateway timed out (${detail})`, upstreamCode };
  if (status >= 500) return { reason: 'down', message: `HMRC is unavailable (${detail})`, upstreamCode };
  if (status === 400 || status === 401 || status === 403 || status === 406 || status === 415) {
    return { reason: 'rejected', message: `HMRC refused the request (${detail})`, upstreamCode };
  }
  return { reason: 'bad_response', message: `HMRC answered ${detail}`, upstreamCode };
}

/** The shared name and address, or `null` when HMRC gave none. */
function traderOf(details: unknown): EoriTrader | null {
  if (!isRecord(details)) return null;
  const address = isRecord(details.address) ? details.address : {};
  const trader: EoriTrader = {
    name: cleanText(details.traderName),
    street: cleanText(address.streetAndNumber),
    postalCode: cleanText(address.postcode),
    city: cleanText(address.cityName),
    country: cleanText(address.countryCode),
  };
  return Object.values(trader).some((value) => value !== null) ? trader : null;
}

/**
 * Reads one HMRC answer for the numbers sent: a result per number, or the same unavailability for
 * every one of them when the request as a whole failed.
 */
export function readHmrcEoriAnswer(
  response: HttpResponse,
  eoris: readonly string[],
  now: Date,
): Map<string, EoriResult> {
  const all = (failure: EoriFailure) =>
    new Map(eoris.map((eori) => [eori, eoriUnavailable('hmrc', eori, failure)] as const));
  if (response.status !== 200) return all(statusFailure(response, now));
  const json = parseJson(response.body);
  if (!Array.isArray(json)) {
    const what = looksLikeHtml(response.body) ? 'an HTML page' : excerpt(response.body);
    return all({ reason: 'bad_response', message: `HMRC answered 200 without a list of results: ${what}` });
  }
  const byNumber = new Map<string, Record<string, unknown>>();
  for (const item of json) {
    if (!isRecord(item) || typeof item.eori !== 'string' || typeof item.valid !== 'boolean') continue;
    const eori = item.eori.replace(/\s+/g, '').toUpperCase();
    if (!byNumber.has(eori)) byNumber.set(eori, item);
  }
  return new Map<string, EoriResult>(eoris.map((eori) => [eori, readItem(eori, byNumber.get(eori), now)]));
}

/** The list's item for one number, as an answer, or unavailability when there is none. */
function readItem(eori: string, item: Record<string, unknown> | undefined, now: Date): EoriResult {
  if (!item) {
    return eoriUnavailable('hmrc', eori, {
      reason: 'bad_response',
      message: `HMRC answered without a result for ${eori}`,
    });
  }
  const valid = item.valid === true;
  return {
    kind: 'answer',
    source: 'hmrc',
    eori,
    valid,
    trader: valid ? traderOf(item.companyDetails) : null,
    checkedAt: parseDate(item.processingDate, now),
    upstreamStatus: valid ? 'valid: true' : 'valid: false',
  };
}

export function createHmrcEoriClient(options: HmrcEoriClientOptions): EoriClient {
  const transport = transportFor(options.fetch);
  const now = options.now ?? (() => new Date());
  const url = joinUrl(options.baseUrl, HMRC_EORI_PATH);

  function send(eoris: string[], signal: AbortSignal | undefined) {
    return transport({
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: HMRC_EORI_ACCEPT },
      body: JSON.stringify({ eoris }),
      timeoutMs: options.timeoutMs,
      ...(signal ? { signal } : {}),
      ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}),
    });
  }

  function check(checkRequest: EoriCheckRequest): Promise<EoriResult[]> {
    const steps: EoriRequestSteps = {
      source: 'hmrc',
      label: LABEL,
      refusal: hmrcEoriRefusal,
      send: (eoris) => send(eoris, checkRequest.signal),
      read: (response, eoris) => readHmrcEoriAnswer(response, eoris, now()),
    };
    return inChunks('hmrc', checkRequest, HMRC_EORI_MAX_PER_REQUEST, (eoris) => requestOnce(steps, eoris));
  }

  return { source: 'hmrc', perRequest: HMRC_EORI_MAX_PER_REQUEST, check };
}
