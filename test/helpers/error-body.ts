import assert from 'node:assert/strict';
import type { LightMyRequestResponse as Response } from 'fastify';

/**
 * Asserts that `res` is the error answer `status` with exactly these bytes: the envelope
 * `{"error":{"code","message"[,"details"]},"meta":{"request_id","latency_ms"}}`, its request id the
 * response's `Service-Request-Id` (the latency, which varies, is read from the answer).
 */
export function assertErrorBody(
  res: Response,
  status: number,
  error: { code: string; message: string; details?: Record<string, unknown> },
  what?: string,
): void {
  assert.equal(res.statusCode, status, what ?? res.body);
  assert.equal(res.headers['content-type'], 'application/json; charset=utf-8', what);
  const latency = (res.json() as { meta?: { latency_ms?: unknown } }).meta?.latency_ms;
  assert.ok(Number.isInteger(latency), what);
  const requestId = res.headers['service-request-id'];
  assert.equal(typeof requestId, 'string', what);
  const expected = JSON.stringify({
    error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
    meta: { request_id: requestId, latency_ms: latency },
  });
  assert.equal(res.body, expected, what);
}
