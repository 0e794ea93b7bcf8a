/**
 * The closed list of error codes of the API (DESIGN §2). Every error response carries one of them.
 */
export const ERROR_CODES = [
  'unauthorized',
  'plan_required',
  'invalid_request',
  'invalid_format',
  'country_unsupported',
  'seller_country_unsupported',
  'not_found',
  'batch_too_large',
  'webhook_limit_reached',
  'idempotency_conflict',
  'requester_not_authorised',
  'rate_limited',
  'registry_unavailable',
  'upstream_error',
  'payload_too_large',
  'internal_error',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** An error meant for the API client: a status, a code from the closed list and a clear message. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const errors = {
  unauthorized: (
    message = 'A valid API key is required: send "Authorization: Bearer svc_live_…" or "svc_test_…".',
  ) => new ApiError(401, 'unauthorized', message),
  planRequired: (operation: string, plans: readonly string[], message?: string) =>
    new ApiError(
      402,
      'plan_required',
      message ?? `${operation} is not included in this key's plan; it needs the ${plans.join(' or ')} plan.`,
      { required_plans: [...plans] },
    ),
  invalidRequest: (message: string, details?: Record<string, unknown>) =>
    new ApiError(400, 'invalid_request', message, details),
  notFound: (message = 'Not found.') => new ApiError(404, 'not_found', message),
  rateLimited: (retryAfterSeconds: number, message?: string) =>
    new ApiError(
      429,
      'rate_limited',
      message ?? `Too many requests; retry after ${retryAfterSeconds} seconds.`,
      { retry_after_seconds: retryAfterSeconds },
      { 'retry-after': String(retryAfterSeconds) },
    ),
};
