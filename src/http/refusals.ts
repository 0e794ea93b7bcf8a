import type { ErrorCode } from '../lib/errors.js';
import type { Refusal, RefusalReason } from '../lib/refusal.js';
import { ApiError } from './api-error.js';

/**
 * The one mapping of refusals to HTTP: every reason's status and code. A code may be answered with
 * two statuses (an idempotency key in flight is 409, reused with another body 422), so the status
 * follows the reason, not the code.
 */
export const REFUSAL_HTTP: Readonly<Record<RefusalReason, { status: number; code: ErrorCode }>> = {
  key_unknown: { status: 401, code: 'unauthorized' },
  key_revoked: { status: 401, code: 'unauthorized' },
  key_account_disabled: { status: 401, code: 'unauthorized' },
  key_expired: { status: 401, code: 'unauthorized' },
  admin_key: { status: 401, code: 'unauthorized' },
  invalid_format: { status: 400, code: 'invalid_format' },
  country_unsupported: { status: 400, code: 'country_unsupported' },
  seller_country_unsupported: { status: 400, code: 'seller_country_unsupported' },
  requester_invalid: { status: 400, code: 'invalid_requester_vat' },
  requester_not_accepted: { status: 422, code: 'invalid_requester_vat' },
  batch_too_large: { status: 400, code: 'batch_too_large' },
  webhook_limit_reached: { status: 400, code: 'webhook_limit_reached' },
  // The closed list has no code for a conflict with a resource's state but idempotency_conflict,
  // which means a reused Idempotency-Key: the request cannot be answered as sent.
  webhook_disabled: { status: 400, code: 'invalid_format' },
  monitor_limit_reached: { status: 403, code: 'monitor_limit_reached' },
  not_found: { status: 404, code: 'not_found' },
  rate_change_not_held: { status: 400, code: 'invalid_format' },
  idempotency_in_flight: { status: 409, code: 'idempotency_conflict' },
  idempotency_key_reused: { status: 422, code: 'idempotency_conflict' },
  rate_limited: { status: 429, code: 'rate_limited' },
  // The hosted contract's 502 for an upstream registry failure.
  registry_unavailable: { status: 502, code: 'registry_unavailable' },
  taxauth_rejected: { status: 400, code: 'taxauth_rejected' },
  taxauth_session_limit: { status: 429, code: 'taxauth_session_limit' },
  authority_unavailable: { status: 503, code: 'taxauth_unavailable' },
  authority_unreachable: { status: 502, code: 'taxauth_unavailable' },
  taxauth_server_error: { status: 503, code: 'taxauth_server_error' },
  // Until an operator acknowledges the chain head (docs/evidence.md): no Retry-After.
  evidence_unverified: { status: 503, code: 'evidence_unverified' },
};

/** The API error of a refusal: its status and code, its message and details, `Retry-After` when known. */
export function refusalError(refusal: Refusal): ApiError {
  const { status, code } = REFUSAL_HTTP[refusal.reason];
  return new ApiError(
    status,
    code,
    refusal.message,
    refusal.details,
    refusal.retryAfterSeconds !== undefined
      ? { 'retry-after': String(refusal.retryAfterSeconds) }
      : undefined,
  );
}
