import { seconds } from '../../lib/errors.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import type { EvatrAnswer, EvatrResult } from '../../registries/evatr.js';

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

/** DESIGN's mapping of an upstream result that is not a 200. */
export function upstreamRefusal(result: EvatrResult): Refusal | null {
  if (result.kind === 'failure') {
    if (result.reason === 'circuit_open') {
      const wait = result.retryAfterSeconds ?? UNAVAILABLE_RETRY_AFTER_SECONDS;
      return refusal(
        'authority_unavailable',
        `The tax authority is unavailable (${result.message}); nothing was confirmed. Retry after ${wait} seconds.`,
        undefined,
        wait,
      );
    }
    if (result.reason === 'bad_response') {
      return refusal(
        'taxauth_server_error',
        `The tax authority is unavailable (${result.message}); try again later.`,
        undefined,
        UNAVAILABLE_RETRY_AFTER_SECONDS,
      );
    }
    return refusal(
      'authority_unreachable',
      result.reason === 'timeout'
        ? 'The tax authority did not answer in time; nothing was confirmed. Try again later.'
        : 'The tax authority could not be reached; nothing was confirmed. Try again later.',
      { reason: result.reason },
    );
  }
  const code = toTaxauthCode(result.status);
  switch (result.category) {
    case 'qualified':
    case 'valid_not_qualified':
    case 'invalid':
      return null;
    case 'caller_error':
      return refusal(
        'taxauth_rejected',
        `The tax authority rejected the request (${code}): ${result.description}`,
        upstreamDetails(result),
      );
    case 'requester_refused':
      return refusal(
        'requester_not_accepted',
        `The tax authority does not accept the requester VAT number (${code}): ${result.description}`,
        upstreamDetails(result),
      );
    case 'session_limit':
      return refusal(
        'taxauth_session_limit',
        `The tax authority's limit of qualified confirmations was reached (${code}); retry after ${seconds(SESSION_LIMIT_RETRY_AFTER_SECONDS)}.`,
        { ...upstreamDetails(result), retry_after_seconds: SESSION_LIMIT_RETRY_AFTER_SECONDS },
        SESSION_LIMIT_RETRY_AFTER_SECONDS,
      );
    case 'unavailable':
      // The authority's own "unavailable" codes (taxauth-0011, -0013) and its server errors
      // (1001–1004, 2004, 2011, 3011, unknown codes) keep apart, as the hosted SDK's codes do.
      return refusal(
        AUTHORITY_UNAVAILABLE_CODES.has(result.status) ? 'authority_unavailable' : 'taxauth_server_error',
        `The tax authority is unavailable (${code}): ${result.description}`,
        { ...upstreamDetails(result), retry_after_seconds: UNAVAILABLE_RETRY_AFTER_SECONDS },
        UNAVAILABLE_RETRY_AFTER_SECONDS,
      );
  }
}
