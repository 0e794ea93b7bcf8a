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
  type EvatrRawExchange,
  type EvatrRequest,
  type EvatrResult,
  readEvatrAnswer,
} from './evatr-protocol.js';
import { type HttpFailure, type Transport, transportFor } from './http.js';

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

  /** One exchange: the request JSON sent once, then what came back read as an answer or a failure. */
  async function confirm(request: EvatrRequest): Promise<EvatrResult> {
    const requestBody = buildEvatrRequestBody(request);
    const outcome = await transport({
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: requestBody,
      timeoutMs: options.timeoutMs,
      ...(request.signal ? { signal: request.signal } : {}),
    });
    if (!outcome.ok) return notAnswered(outcome, requestBody, request.signal);
    const raw: EvatrRawExchange = {
      url,
      requestBody,
      responseBody: outcome.body,
      httpStatus: outcome.status,
      contentType: outcome.headers.get('content-type'),
    };
    return readEvatrAnswer(request, raw, now);
  }

  /** The failure of an exchange that brought no body back: timed out, aborted, too large or unreachable. */
  function notAnswered(
    outcome: HttpFailure,
    requestBody: string,
    signal: AbortSignal | undefined,
  ): EvatrFailure {
    const failure = (reason: EvatrFailureReason, message: string): EvatrFailure => ({
      kind: 'failure',
      reason,
      message,
      raw: { url, requestBody, responseBody: null, httpStatus: null, contentType: null },
    });
    if (outcome.kind === 'timeout') {
      return signal?.aborted
        ? failure('timeout', 'The eVatR request was aborted by the caller')
        : failure('timeout', `No answer from eVatR within ${options.timeoutMs} ms`);
    }
    if (outcome.kind === 'too_large') return failure('bad_response', `eVatR sent ${outcome.message}`);
    return failure('network', `eVatR could not be reached: ${outcome.message}`);
  }

  return { confirm };
}
