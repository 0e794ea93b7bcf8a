import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

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
 * `node:http`/`node:https` transport: a POST with a hard timeout over the whole exchange, redirects
 * never followed (a 3xx is just a status), the connect-time `lookup` from the request, keep-alive
 * connections reused per host.
 */
export function createHttpTransport(): WebhookTransport {
  const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 30_000 });
  const httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64, timeout: 30_000 });
  return {
    send(request) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      return new Promise<WebhookResponse>((resolve) => {
        let settled = false;
        const finish = (result: WebhookResponse) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          request.signal?.removeEventListener('abort', onAbort);
          resolve(result);
        };
        const fail = (error: string, flags: { blocked?: boolean; aborted?: boolean } = {}) =>
          finish({
            kind: 'error',
            error,
            blocked: flags.blocked ?? false,
            aborted: flags.aborted ?? false,
            latencyMs: elapsed(),
          });
        const isHttps = request.url.protocol === 'https:';
        const req = (isHttps ? https : http).request(request.url, {
          method: 'POST',
          agent: isHttps ? httpsAgent : httpAgent,
          lookup: request.lookup,
          headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
        });
        const timer = setTimeout(() => {
          fail(`No answer within ${request.timeoutMs} ms.`);
          req.destroy();
        }, request.timeoutMs);
        const onAbort = () => {
          fail('The worker stopped before the receiver answered.', { aborted: true });
          req.destroy();
        };
        if (request.signal?.aborted) {
          onAbort();
          return;
        }
        request.signal?.addEventListener('abort', onAbort, { once: true });
        req.on('response', (res) => {
          const status = res.statusCode ?? 0;
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_RESPONSE_BYTES) res.destroy();
          });
          res.on('error', () => {});
          res.on('close', () => finish({ kind: 'response', status, latencyMs: elapsed() }));
          res.on('end', () => finish({ kind: 'response', status, latencyMs: elapsed() }));
        });
        req.on('error', (error: NodeJS.ErrnoException) => {
          if (error.code === 'EWEBHOOKBLOCKED') fail(`Refused: ${error.message}.`, { blocked: true });
          else fail(error.code ? `${error.code}: ${error.message}` : error.message);
        });
        req.end(request.body);
      });
    },
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
