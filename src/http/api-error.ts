import { type ErrorCode, MALFORMED_CODE, planList, seconds } from '../lib/errors.js';

/**
 * The HTTP side of a refusal: an error with its status, its code from the closed list
 * (`src/lib/errors.ts`) and a clear message, which the error handler (`errors.ts`) puts into the
 * envelope. Only route code makes one: the routes, their request hooks (the key and admin-key
 * checks, the per-key limit and the monthly quota) and `src/http/` itself; a service returns a
 * `Refusal` and the route maps it with `refusalError` (`refusals.ts`).
 */

/** An error meant for the API client: a status, a code from the closed list and a clear message. */
export class ApiError extends Error {
  readonly statusCode: number;
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;
  constructor(
    statusCode: number,
    code: ErrorCode,
    message: string,
    details?: Record<string, unknown>,
    headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
    this.statusCode = statusCode;
    this.code = code;
    this.details = details;
    this.headers = headers;
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
      message ?? `${operation} is not included in this key's plan; it needs the ${planList(plans)} plan.`,
      { required_plans: [...plans] },
    ),
  /** The key's scopes do not include the operation. */
  scopeNotAllowed: (message: string) => new ApiError(403, 'scope_not_allowed', message),
  /** The key's address allowlist does not include the client's address. */
  ipNotAllowed: (message: string) => new ApiError(403, 'ip_not_allowed', message),
  /** A malformed request (body, query, header or path): `400 invalid_format`, as in the hosted contract. */
  invalidRequest: (message: string, details?: Record<string, unknown>) =>
    new ApiError(400, MALFORMED_CODE, message, details),
  notFound: (message = 'Not found.') => new ApiError(404, 'not_found', message),
  rateLimited: (retryAfterSeconds: number, message?: string) =>
    new ApiError(
      429,
      'rate_limited',
      message ?? `Too many requests; retry after ${seconds(retryAfterSeconds)}.`,
      { retry_after_seconds: retryAfterSeconds },
      { 'retry-after': String(retryAfterSeconds) },
    ),
};
