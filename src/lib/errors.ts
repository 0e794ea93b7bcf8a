/**
 * The closed list of error codes of the API (DESIGN §2, docs/compatibility.md). Every error response
 * carries one of them. They are the codes of the hosted API's published contract (a malformed
 * request of any kind is `invalid_format`, as there; the confirmation codes are those of its SDK),
 * plus those it has no word for: `idempotency_conflict`, `payload_too_large`, `internal_error`,
 * `evidence_unverified` (confirmations stopped until an operator acknowledges the evidence chain),
 * and `scope_not_allowed` and `ip_not_allowed` for a key used outside its scopes or address allowlist.
 */
export const ERROR_CODES = [
  'unauthorized',
  'plan_required',
  'scope_not_allowed',
  'ip_not_allowed',
  'invalid_format',
  'invalid_requester_vat',
  'country_unsupported',
  'seller_country_unsupported',
  'not_found',
  'batch_too_large',
  'webhook_limit_reached',
  'monitor_limit_reached',
  'idempotency_conflict',
  'rate_limited',
  'registry_unavailable',
  'taxauth_session_limit',
  'taxauth_unavailable',
  'taxauth_server_error',
  'taxauth_rejected',
  'payload_too_large',
  'internal_error',
  'evidence_unverified',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * The code of every malformed request, wherever it is refused (schema, JSON, media type, a bad
 * parameter value): the hosted contract has no separate code for it.
 */
export const MALFORMED_CODE = 'invalid_format' satisfies ErrorCode;

/** `1 second`, `30 seconds`. */
export function seconds(n: number): string {
  return `${n} ${n === 1 ? 'second' : 'seconds'}`;
}

/** Plans as people write them: `Pro or Business`, `Starter, Pro or Business`. */
export function planList(plans: readonly string[]): string {
  const names = plans.map((p) => p.charAt(0).toUpperCase() + p.slice(1));
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/** Node's codes for a connection that could not be made or was lost. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);

/**
 * Whether an error means a service openvat stores its data in cannot be reached right now, rather
 * than a fault of the request or of the code: a refused or lost connection, or PostgreSQL's
 * connection exceptions (SQLSTATE class 08) and shutdown codes (57P01–57P03).
 */
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || /^08|^57P0[123]$/.test(code))) return true;
  // node-postgres's own wording for a connection that ended under a query or before it.
  if (/^Connection terminated/.test(error.message)) return true;
  return error instanceof AggregateError && error.errors.some(isConnectionFailure);
}
