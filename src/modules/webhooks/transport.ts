import type { LookupFunction } from 'node:net';
import { createHttpClient } from '../../lib/http-client.js';

export interface WebhookRequest {
  url: URL;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Resolves (and vets) the host at connect time. */
  lookup: LookupFunction;
  signal?: AbortSignal;
}

export type WebhookResponse =
  | { kind: 'response'; status: number; latencyMs: number }
  | { kind: 'error'; error: string; blocked: boolean; aborted: boolean; latencyMs: number };

/** Port for sending one webhook attempt. */
export interface WebhookTransport {
  send(request: WebhookRequest): Promise<WebhookResponse>;
  close(): void;
}

/** How much of a receiver's answer is read (and discarded) before the connection is dropped. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * Transport over the service's HTTP client (src/lib/http-client.ts): a POST with a hard timeout
 * over the whole exchange, redirects never followed (a 3xx is just a status), the request's
 * `lookup` resolving the host at connect time, the answer read up to 64 KiB and dropped, keep-alive
 * connections reused per host (at most 64, idle ones closed after 30 s).
 */
export function createHttpTransport(): WebhookTransport {
  const client = createHttpClient({ connectionsPerOrigin: 64, idleTimeoutMs: 30_000 });
  return {
    async send(request) {
      const started = performance.now();
      const outcome = await client.request({
        url: request.url,
        method: 'POST',
        headers: request.headers,
        body: request.body,
        timeoutMs: request.timeoutMs,
        ...(request.signal ? { signal: request.signal } : {}),
        lookup: request.lookup,
        maxBodyBytes: MAX_RESPONSE_BYTES,
        read: 'discard',
      });
      const latencyMs = Math.round(performance.now() - started);
      if (outcome.ok) return { kind: 'response', status: outcome.status, latencyMs };
      const error = (message: string, flags: { blocked?: boolean; aborted?: boolean } = {}) =>
        ({
          kind: 'error',
          error: message,
          blocked: flags.blocked ?? false,
          aborted: flags.aborted ?? false,
          latencyMs,
        }) as const;
      if (outcome.kind === 'timeout') return error(`No answer within ${request.timeoutMs} ms.`);
      if (outcome.kind === 'cancelled') {
        return error('The worker stopped before the receiver answered.', { aborted: true });
      }
      if (outcome.code === 'EWEBHOOKBLOCKED') return error(`Refused: ${outcome.detail}.`, { blocked: true });
      return error(outcome.code ? `${outcome.code}: ${outcome.detail}` : outcome.detail);
    },
    close() {
      void client.close();
    },
  };
}
