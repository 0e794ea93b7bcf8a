/**
 * The HTTP server's edges, outside any route: its timeouts and limits from the configuration, the raw
 * answer to requests the HTTP parser refuses, and why a JSON body was refused.
 */
import type { Config } from '../config.js';
import { MALFORMED_CODE } from '../lib/errors.js';

/** Raw answer for errors the HTTP parser catches before Fastify sees a request (oversized headers, bad syntax, timeouts). */
export function clientErrorResponse(error: { code?: string }, id: string): string {
  const [status, reason, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'The request line or headers are too large.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'The request was not received in time; the connection is closed.']
        : [400, 'Bad Request', 'The HTTP request is malformed.'];
  const body = JSON.stringify({
    error: { code: MALFORMED_CODE, message },
    meta: { request_id: id, latency_ms: 0 },
  });
  return (
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nService-Request-Id: ${id}\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * Why a JSON body was refused: not JSON at all, or JSON with a `__proto__` or `constructor.prototype`
 * key, which the parser refuses so that no body can reach an object's prototype.
 */
export function jsonErrorMessage(text: string): string {
  try {
    JSON.parse(text);
  } catch {
    return 'The request body is not valid JSON.';
  }
  return 'The request body may not have "__proto__" or "constructor.prototype" keys.';
}

/**
 * The server's timeouts and limits from the configuration. Node checks request and header
 * timeouts on a timer (every 30 s by default), so the timer runs at a quarter of the shorter of the
 * two: a client trickling its headers or body is cut off within 125 % of the timeout.
 */
export function serverLimits(config: Config) {
  const c = config.connections;
  return {
    requestTimeout: c.requestTimeoutMs,
    keepAliveTimeout: c.keepAliveTimeoutMs,
    connectionTimeout: c.idleTimeoutMs,
    maxRequestsPerSocket: c.maxRequestsPerSocket,
    http: {
      requestTimeout: c.requestTimeoutMs,
      headersTimeout: c.headersTimeoutMs,
      connectionsCheckingInterval: Math.max(
        25,
        Math.floor(Math.min(c.requestTimeoutMs, c.headersTimeoutMs) / 4),
      ),
    },
  };
}
