import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Header names and values exactly as sent, in order. */
  rawHeaders: string[];
  body: string;
  /** Wall-clock time of receipt (ms since epoch). */
  receivedAt: number;
}

/**
 * What the receiver does with the n-th request (0-based): answer a status now, answer it after a
 * delay (a slow receiver), or never answer.
 */
export type Behaviour = (
  request: ReceivedWebhook,
  index: number,
) => number | 'hang' | { status: number; afterMs: number };

export interface WebhookReceiver {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  port: number;
  received: ReceivedWebhook[];
  /** TCP connections accepted so far (a refused attempt must not even connect). */
  connections(): number;
  /** The most requests to `path` that were open at once (received, not yet answered or dropped). */
  peakOpen(path: string): number;
  behave(behaviour: Behaviour): void;
  /** Resolves once `count` requests have arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 (port 0 unless given) that records every request. */
export async function startWebhookReceiver(
  options: { port?: number; behaviour?: Behaviour } = {},
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let behaviour: Behaviour = options.behaviour ?? (() => 200);
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const hanging = new Set<ServerResponse>();
  const open = new Map<string, number>();
  /** Per request path (with its query): the most requests open at once. */
  const peaks = new Map<string, number>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ReceivedWebhook = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      };
      const index = received.length;
      received.push(request);
      const path = request.path;
      open.set(path, (open.get(path) ?? 0) + 1);
      peaks.set(path, Math.max(peaks.get(path) ?? 0, open.get(path) ?? 0));
      res.on('close', () => open.set(path, (open.get(path) ?? 1) - 1));
      for (const waiter of waiters.splice(0)) {
        if (received.length >= waiter.count) waiter.resolve();
        else waiters.push(waiter);
      }
      const answer = behaviour(request, index);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      if (typeof answer === 'object') {
        hanging.add(res);
        setTimeout(() => {
          hanging.delete(res);
          if (!res.destroyed) res.writeHead(answer.status, { 'content-type': 'text/plain' }).end('ok');
        }, answer.afterMs);
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  let connections = 0;
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    received,
    connections: () => connections,
    peakOpen: (path) => peaks.get(path) ?? 0,
    behave(next) {
      behaviour = next;
    },
    waitFor(count, timeoutMs = 20_000) {
      if (received.length >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${received.length} of ${count} requests`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
