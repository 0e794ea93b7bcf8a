/**
 * The port of the EORI services: the Commission's EOS validation service (EU member states and
 * XI) and HMRC's "Check an EORI number" API (GB). Both check up to 10 numbers per request, so a
 * client takes a list and gives one result per number, in the order asked. Expected outcomes are
 * values: `valid: false` only on the service's own documented answer for that number; anything
 * else (an error page, a fault, another shape, a timeout, throttling, a number the client would
 * not send) is `unavailable` with a reason, never a thrown error.
 */
import { type HttpFailure, type HttpOutcome, type HttpResponse, isRetryable } from './http.js';
import type { UnavailableReason } from './port.js';

export type EoriSource = 'eos' | 'hmrc';

/** The trader as the service publishes it; every field `null` when not given. */
export interface EoriTrader {
  name: string | null;
  street: string | null;
  postalCode: string | null;
  city: string | null;
  /** As the service gives it (EOS `country`, HMRC `countryCode` when present). */
  country: string | null;
}

export interface EoriAnswer {
  kind: 'answer';
  source: EoriSource;
  /** The number as asked (canonical, upper case). */
  eori: string;
  valid: boolean;
  /** Published name and address; `null` when the number is not valid or the trader did not agree to publication. */
  trader: EoriTrader | null;
  /** When the service says it checked (EOS `requestDate`, HMRC `processingDate`), else when the answer arrived. */
  checkedAt: Date;
  /** The service's own word for the outcome: EOS `status`/`statusDescr` (`0 Valid`), HMRC `valid` (`true`). */
  upstreamStatus: string;
}

export interface EoriUnavailable {
  kind: 'unavailable';
  source: EoriSource;
  eori: string;
  reason: UnavailableReason;
  retryable: boolean;
  /** Safe to show to API clients. */
  message: string;
  upstreamCode?: string;
  retryAfterSeconds?: number;
}

export type EoriResult = EoriAnswer | EoriUnavailable;

export interface EoriCheckRequest {
  /** Canonical numbers (upper case, no separators); duplicates are asked once. */
  eoris: readonly string[];
  /** The caller's deadline for the whole check. */
  signal?: AbortSignal;
}

export interface EoriClient {
  readonly source: EoriSource;
  /** The most numbers sent in one upstream request; longer lists are sent in turn. */
  readonly perRequest: number;
  /** One result per number asked, in the same order. */
  check(request: EoriCheckRequest): Promise<EoriResult[]>;
}

/** What a failed call (or part of one) gives every number in it. */
export interface EoriFailure {
  reason: UnavailableReason;
  message: string;
  retryable?: boolean;
  upstreamCode?: string;
  retryAfterSeconds?: number;
}

export function eoriUnavailable(source: EoriSource, eori: string, failure: EoriFailure): EoriUnavailable {
  const result: EoriUnavailable = {
    kind: 'unavailable',
    source,
    eori,
    reason: failure.reason,
    retryable: failure.retryable ?? isRetryable(failure.reason),
    message: failure.message,
  };
  if (failure.upstreamCode !== undefined) result.upstreamCode = failure.upstreamCode;
  if (failure.retryAfterSeconds !== undefined) result.retryAfterSeconds = failure.retryAfterSeconds;
  return result;
}

/** A transport failure (timeout, network, oversized body) in the port's reasons. */
export function transportEoriFailure(label: string, failure: HttpFailure): EoriFailure {
  if (failure.kind === 'timeout') return { reason: 'timeout', message: `${label}: ${failure.message}` };
  if (failure.kind === 'too_large')
    return { reason: 'bad_response', message: `${label}: ${failure.message}` };
  return { reason: 'down', message: `${label}: ${failure.message}` };
}

/**
 * Runs `send` over the distinct numbers in chunks of `size`, one chunk after the other (the
 * caller's permits decide how many requests run at once), and gives each number asked its result.
 * A chunk is not sent once the caller's signal has fired: its numbers time out.
 */
export async function inChunks(
  source: EoriSource,
  request: EoriCheckRequest,
  size: number,
  send: (eoris: string[]) => Promise<Map<string, EoriResult>>,
): Promise<EoriResult[]> {
  const distinct = [...new Set(request.eoris)];
  const results = new Map<string, EoriResult>();
  for (let at = 0; at < distinct.length; at += size) {
    const chunk = distinct.slice(at, at + size);
    if (request.signal?.aborted) {
      for (const eori of chunk) {
        results.set(
          eori,
          eoriUnavailable(source, eori, {
            reason: 'timeout',
            message: 'the call was cancelled before this number was sent',
          }),
        );
      }
      continue;
    }
    for (const [eori, result] of await send(chunk)) results.set(eori, result);
  }
  return request.eoris.map(
    (eori) =>
      results.get(eori) ??
      eoriUnavailable(source, eori, { reason: 'bad_response', message: `no result for ${eori}` }),
  );
}

/** One upstream request of a client: which numbers it refuses to send, how it sends and reads the rest. */
export interface EoriRequestSteps {
  source: EoriSource;
  /** Used in transport failure messages, e.g. `EOS`. */
  label: string;
  /** Why a number is not sent, or `undefined` when it may be. */
  refusal(eori: string): string | undefined;
  send(eoris: string[]): Promise<HttpOutcome>;
  read(response: HttpResponse, eoris: string[]): Map<string, EoriResult>;
}

/**
 * Answers the numbers a client will not send (`rejected`, with its reason, never sent), sends the
 * others in one request and reads the answer; a transport failure leaves each of them unavailable.
 */
export async function requestOnce(
  steps: EoriRequestSteps,
  eoris: string[],
): Promise<Map<string, EoriResult>> {
  const results = new Map<string, EoriResult>();
  const sendable: string[] = [];
  for (const eori of eoris) {
    const refusal = steps.refusal(eori);
    if (refusal)
      results.set(eori, eoriUnavailable(steps.source, eori, { reason: 'rejected', message: refusal }));
    else sendable.push(eori);
  }
  if (sendable.length === 0) return results;
  const outcome = await steps.send(sendable);
  if (!outcome.ok) {
    const failure = transportEoriFailure(steps.label, outcome);
    for (const eori of sendable) results.set(eori, eoriUnavailable(steps.source, eori, failure));
    return results;
  }
  for (const [eori, result] of steps.read(outcome, sendable)) results.set(eori, result);
  return results;
}
