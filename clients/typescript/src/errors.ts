/**
 * Errors of the client. Every failure rejects with an `OpenVatError`; answers of the service are
 * sorted into one class per family by `error.code`, so `instanceof` picks what to do. A code this
 * version of the client does not know stays a plain `OpenVatError` with its `code` and `status`.
 */

export interface ErrorBody {
  error?: { code?: unknown; message?: unknown; details?: unknown };
  meta?: { request_id?: unknown };
}

export interface ErrorInit {
  status: number;
  code: string;
  requestId?: string | null;
  details?: Record<string, unknown> | undefined;
  headers?: Record<string, string>;
  /** Seconds to wait before retrying (rate limit and registry families). */
  retryAfter?: number | null;
  cause?: unknown;
}

export class OpenVatError extends Error {
  /** HTTP status of the answer; 0 when no answer arrived (connection failure, timeout, abort). */
  readonly status: number;
  /** `error.code` of the answer (e.g. `invalid_format`), or `connection_error`, `timeout`, `aborted`. */
  readonly code: string;
  /** `meta.request_id` of the answer (or its `Service-Request-Id` header); null without an answer. */
  readonly requestId: string | null;
  /** `error.details` of the answer, when it has any. */
  readonly details: Record<string, unknown> | undefined;
  /** Headers of the answer (lower-case names); empty without an answer. */
  readonly headers: Record<string, string>;

  constructor(message: string, init: ErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId ?? null;
    this.details = init.details;
    this.headers = init.headers ?? {};
  }
}

/** 401 `unauthorized`: the API key is missing, malformed, unknown or revoked. */
export class AuthenticationError extends OpenVatError {}

/** 402 `plan_required`: the key's plan does not include the operation (`details.required_plans`). */
export class PlanRequiredError extends OpenVatError {}

/**
 * The request cannot be answered as sent: fix it, do not retry. `invalid_*`, `country_*`,
 * `*_unsupported`, `*_not_supported`, `*_limit_reached`, `*_too_large`, `*_rejected` (today:
 * `invalid_format`, `invalid_requester_vat`, `country_unsupported`, `seller_country_unsupported`,
 * `batch_too_large`, `webhook_limit_reached`, `payload_too_large`, `taxauth_rejected`).
 */
export class InvalidRequestError extends OpenVatError {}

/** 404 `not_found`: no such resource for this key. */
export class NotFoundError extends OpenVatError {}

/**
 * 422 `idempotency_conflict` (and any other `*_conflict`): the Idempotency-Key was already used with
 * another body. Send the new request with a new key.
 */
export class ConflictError extends OpenVatError {}

/**
 * 409 `idempotency_conflict`: a request with this Idempotency-Key is still in progress at the service
 * (typically the first attempt of a call that timed out on the client's side). The original request
 * may have succeeded: send it again with the same key (`idempotencyKey`) to get its answer; never
 * with a new key, which would confirm a second time. Not a `ConflictError`.
 */
export class IdempotencyInProgressError extends OpenVatError {
  /** The key to send again. */
  readonly idempotencyKey: string | null;
  constructor(message: string, init: ErrorInit & { idempotencyKey?: string | null }) {
    super(message, init);
    this.idempotencyKey = init.idempotencyKey ?? null;
  }
}

/**
 * 429 `rate_limited` (this key's limit) or `*_session_limit` (`taxauth_session_limit`: the tax
 * authority's session limit): `retryAfter` says how many seconds to wait.
 */
export class RateLimitError extends OpenVatError {
  /** Seconds to wait before retrying, from `Retry-After` (or `details.retry_after_seconds`); null if absent. */
  readonly retryAfter: number | null;
  constructor(message: string, init: ErrorInit) {
    super(message, init);
    this.retryAfter = init.retryAfter ?? null;
  }
}

/**
 * `registry_unavailable`, `taxauth_unavailable`, `taxauth_server_error` (any `*_unavailable` or
 * `*_server_error`): the registry or tax authority could not answer and nothing usable was stored.
 * Worth retrying later (`retryAfter`, when the service sent one).
 */
export class RegistryUnavailableError extends OpenVatError {
  readonly retryAfter: number | null;
  constructor(message: string, init: ErrorInit) {
    super(message, init);
    this.retryAfter = init.retryAfter ?? null;
  }
}

/** No answer arrived: the connection failed or was reset. */
export class ConnectionError extends OpenVatError {}

/** No answer within the client's `timeout`. */
export class TimeoutError extends ConnectionError {}

/** The caller's `AbortSignal` aborted the request. */
export class AbortError extends OpenVatError {}

/**
 * Families by code: besides the codes the service uses today, each family takes the codes that
 * follow its naming pattern, so a code added to a family later is sorted without a client update.
 */
type Family = new (message: string, init: ErrorInit) => OpenVatError;

/** The family of an error code; a code of no known family has none (a plain `OpenVatError`). */
export function errorFamily(code: string): Family | null {
  if (code === 'unauthorized') return AuthenticationError;
  if (code === 'plan_required') return PlanRequiredError;
  if (code === 'not_found') return NotFoundError;
  if (code === 'rate_limited' || code.endsWith('_session_limit')) return RateLimitError;
  if (code === 'upstream_error' || /_(unavailable|server_error)$/.test(code)) return RegistryUnavailableError;
  if (code.endsWith('_conflict')) return ConflictError;
  if (
    code.startsWith('invalid_') ||
    code.startsWith('country_') ||
    /_(unsupported|not_supported|limit_reached|too_large|rejected)$/.test(code)
  ) {
    return InvalidRequestError;
  }
  return null;
}

/** Seconds from a `Retry-After` header (delta-seconds or an HTTP date); null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.max(0, (date - now) / 1000);
}

/** The error for a non-2xx answer, from its parsed JSON body (or null when it was not JSON). */
export function errorFromResponse(
  status: number,
  body: unknown,
  headers: Record<string, string>,
): OpenVatError {
  const envelope = (body && typeof body === 'object' ? body : {}) as ErrorBody;
  const error = envelope.error && typeof envelope.error === 'object' ? envelope.error : undefined;
  const code = typeof error?.code === 'string' ? error.code : `http_${status}`;
  const message =
    typeof error?.message === 'string'
      ? error.message
      : `The service answered HTTP ${status} without an error body.`;
  const details =
    error?.details && typeof error.details === 'object'
      ? (error.details as Record<string, unknown>)
      : undefined;
  const requestId =
    typeof envelope.meta?.request_id === 'string'
      ? envelope.meta.request_id
      : (headers['service-request-id'] ?? null);
  const fromDetails = details?.retry_after_seconds;
  const retryAfter =
    parseRetryAfter(headers['retry-after']) ?? (typeof fromDetails === 'number' ? fromDetails : null);
  const init = { status, code, requestId, details, headers, retryAfter };
  // The same code is 422 for a key reused with another body and 409 for a key still in flight.
  if (code === 'idempotency_conflict' && status === 409) {
    return new IdempotencyInProgressError(message, init);
  }
  const Family = errorFamily(code) ?? OpenVatError;
  return new Family(message, init);
}
