/**
 * Client for the German federal tax authority's (BZSt) eVatR REST API: the qualified confirmation of a
 * foreign EU VAT number under §18e UStG (`POST {baseUrl}/v1/abfrage`).
 *
 * Expected outcomes are values. Every body that carries an `evatr-XXXX` status is an `answer`,
 * whatever its HTTP code (the service sends invalid numbers with 200 and a valid number with 400);
 * network errors, timeouts and bodies without a status are a `failure`. One attempt per call: the
 * authority asks callers not to repeat a request immediately, so retrying is the caller's decision.
 */

import {
  buildEvatrRequestBody,
  type EvatrFailure,
  type EvatrFailureReason,
  type EvatrField,
  type EvatrMatches,
  type EvatrRequest,
  type EvatrResult,
  FIELDS,
  nonEmptyStringOrNull,
  normaliseEvatrTimestamp,
  parseEvatrDate,
  parseJsonObject,
  stringOrNull,
  supplied,
  toMatchCode,
} from './evatr-protocol.js';
import { categoriseEvatrStatus, describeEvatrStatus, EVATR_STATUSES } from './evatr-statuses.js';
import { type Transport, transportFor } from './http.js';

export {
  buildEvatrRequestBody,
  type EvatrAnswer,
  type EvatrCompany,
  type EvatrFailure,
  type EvatrFailureReason,
  type EvatrField,
  type EvatrMatchCode,
  type EvatrMatches,
  type EvatrRawExchange,
  type EvatrRequest,
  type EvatrResult,
  normaliseEvatrTimestamp,
  parseEvatrDate,
} from './evatr-protocol.js';
export {
  categoriseEvatrStatus,
  describeEvatrStatus,
  EVATR_STATUS_CATEGORIES,
  EVATR_STATUS_CODES,
  EVATR_STATUSES,
  type EvatrCategory,
  type EvatrStatusCategory,
  type EvatrStatusInfo,
  evatrNumberStatus,
} from './evatr-statuses.js';

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
