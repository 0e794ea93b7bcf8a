/**
 * Why a request is refused. Services return `{ kind: 'ok', … } | Refusal` (they never throw for a
 * refusal and never name an HTTP status); `src/http/refusals.ts` gives each reason its status and
 * its code from the closed list of `errors.ts`, in one table. A reason that becomes one code alone is
 * named as that code; where a code is answered for several reasons (`unauthorized`, `invalid_requester_vat`,
 * `idempotency_conflict`, `taxauth_unavailable`), each reason says which.
 */
export type RefusalReason =
  /** The API key is not one this service knows (or not a key at all). */
  | 'key_unknown'
  | 'key_revoked'
  /** The API key's account is disabled. */
  | 'key_account_disabled'
  /** The API key has expired, or its overlap after a roll ended. */
  | 'key_expired'
  /** An admin key was presented where an API key is needed. */
  | 'admin_key'
  /** Not a possible value: a malformed number, date, field combination. */
  | 'invalid_format'
  | 'country_unsupported'
  | 'seller_country_unsupported'
  /** The requester VAT number cannot be used as given (confirm). */
  | 'requester_invalid'
  /** The tax authority does not accept the requester VAT number (confirm). */
  | 'requester_not_accepted'
  | 'batch_too_large'
  | 'webhook_limit_reached'
  /** The webhook endpoint is disabled, so it is sent nothing (a test event neither). */
  | 'webhook_disabled'
  | 'monitor_limit_reached'
  | 'not_found'
  /** A rate change that is no longer held, so an operator can no longer accept or reject it. */
  | 'rate_change_not_held'
  /** The same idempotency key is being answered now. */
  | 'idempotency_in_flight'
  /** The idempotency key was used with another request body. */
  | 'idempotency_key_reused'
  /** The caller's own limit. */
  | 'rate_limited'
  /** A VAT registry could not answer and no stored answer may be served. */
  | 'registry_unavailable'
  /** The tax authority refused the request as malformed. */
  | 'taxauth_rejected'
  /** The tax authority's limit of qualified confirmations was reached. */
  | 'taxauth_session_limit'
  /** The tax authority says it is unavailable, or calls to it are paused. */
  | 'authority_unavailable'
  /** The tax authority could not be reached or did not answer in time. */
  | 'authority_unreachable'
  /** The tax authority failed with a server error or an unreadable answer. */
  | 'taxauth_server_error'
  /** The evidence chain head cannot be verified, so no confirmation may be appended (confirm). */
  | 'evidence_unverified';

export interface Refusal {
  kind: 'refused';
  reason: RefusalReason;
  /** A clear message for the API client. */
  message: string;
  /** Machine-readable detail (`field`, `reason`, `retry_after_seconds`, …). */
  details?: Record<string, unknown>;
  /** When a retry may succeed (sent as `Retry-After`). */
  retryAfterSeconds?: number;
}

export function refusal(
  reason: RefusalReason,
  message: string,
  details?: Record<string, unknown>,
  retryAfterSeconds?: number,
): Refusal {
  return {
    kind: 'refused',
    reason,
    message,
    ...(details ? { details } : {}),
    ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
  };
}
