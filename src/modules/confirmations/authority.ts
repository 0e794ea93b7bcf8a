import { seconds } from '../../lib/errors.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import type { EvatrAnswer, EvatrFailure, EvatrResult } from '../../registries/evatr.js';

/** `Retry-After` when the authority's session limit (`evatr-0008`) was reached. */
export const SESSION_LIMIT_RETRY_AFTER_SECONDS = 60;
/** `Retry-After` when the authority is unavailable; it asks callers not to repeat a request at once. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 300;

/** `evatr-0000` → `taxauth-0000`. */
export function toTaxauthCode(status: string): string {
  return `taxauth-${status.replace(/^evatr-/i, '')}`;
}

/** Upstream codes that say the authority (or the foreign registry behind it) is unavailable. */
const AUTHORITY_UNAVAILABLE_CODES = new Set(['evatr-0011', 'evatr-0013']);

function upstreamDetails(answer: EvatrAnswer): Record<string, unknown> {
  return { taxauth_status_code: toTaxauthCode(answer.status), taxauth_id: answer.id };
}

/** An upstream result read for the caller: an answer about the number itself, or why there is none. */
export type UpstreamVerdict = { kind: 'ok'; answer: EvatrAnswer } | Refusal;

/**
 * DESIGN's mapping of an upstream result: an answer about the number (qualified, valid but not
 * qualified, invalid) is `ok` and becomes a 200; every other result is a refusal.
 */
export function upstreamVerdict(result: EvatrResult): UpstreamVerdict {
  return result.kind === 'failure' ? failureRefusal(result) : answerVerdict(result);
}

/** No answer: the breaker is open, the body was unreadable, or the authority was not reached in time. */
function failureRefusal(failure: EvatrFailure): Refusal {
  if (failure.reason === 'circuit_open') {
    const wait = failure.retryAfterSeconds ?? UNAVAILABLE_RETRY_AFTER_SECONDS;
    return refusal(
      'authority_unavailable',
      `The tax authority is unavailable (${failure.message}); nothing was confirmed. Retry after ${wait} seconds.`,
      undefined,
      wait,
    );
  }
  if (failure.reason === 'bad_response') {
    return refusal(
      'taxauth_server_error',
      `The tax authority is unavailable (${failure.message}); try again later.`,
      undefined,
      UNAVAILABLE_RETRY_AFTER_SECONDS,
    );
  }
  return refusal(
    'authority_unreachable',
    failure.reason === 'timeout'
      ? 'The tax authority did not answer in time; nothing was confirmed. Try again later.'
      : 'The tax authority could not be reached; nothing was confirmed. Try again later.',
    { reason: failure.reason },
  );
}

/** An answer by its category: about the number (`ok`), or a refusal of the request. */
function answerVerdict(answer: EvatrAnswer): UpstreamVerdict {
  const code = toTaxauthCode(answer.status);
  switch (answer.category) {
    case 'qualified':
    case 'valid_not_qualified':
    case 'invalid':
      return { kind: 'ok', answer };
    case 'caller_error':
      return refusal(
        'taxauth_rejected',
        `The tax authority rejected the request (${code}): ${answer.description}`,
        upstreamDetails(answer),
      );
    case 'requester_refused':
      return refusal(
        'requester_not_accepted',
        `The tax authority does not accept the requester VAT number (${code}): ${answer.description}`,
        upstreamDetails(answer),
      );
    case 'session_limit':
      return refusal(
        'taxauth_session_limit',
        `The tax authority's limit of qualified confirmations was reached (${code}); retry after ${seconds(SESSION_LIMIT_RETRY_AFTER_SECONDS)}.`,
        { ...upstreamDetails(answer), retry_after_seconds: SESSION_LIMIT_RETRY_AFTER_SECONDS },
        SESSION_LIMIT_RETRY_AFTER_SECONDS,
      );
    case 'unavailable':
      // The authority's own "unavailable" codes (taxauth-0011, -0013) and its server errors
      // (1001–1004, 2004, 2011, 3011, unknown codes) keep apart, as the hosted SDK's codes do.
      return refusal(
        AUTHORITY_UNAVAILABLE_CODES.has(answer.status) ? 'authority_unavailable' : 'taxauth_server_error',
        `The tax authority is unavailable (${code}): ${answer.description}`,
        { ...upstreamDetails(answer), retry_after_seconds: UNAVAILABLE_RETRY_AFTER_SECONDS },
        UNAVAILABLE_RETRY_AFTER_SECONDS,
      );
  }
}
