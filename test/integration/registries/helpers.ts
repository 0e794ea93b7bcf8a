import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createSimulatorServer,
  type SimulatorServer,
  type SimulatorUrls,
} from '../../../src/simulators/server.js';

const FIXTURES = new URL('../../fixtures/registries/', import.meta.url);

export function fixture(path: string): string {
  return readFileSync(new URL(path, FIXTURES), 'utf8');
}

export interface Reply {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** `'hang'`: never answer; `'reset'`: destroy the connection. */
export type Handler = (request: RecordedRequest) => Reply | 'hang' | 'reset';

export interface FixtureServer {
  url: string;
  requests: RecordedRequest[];
  /** Replaces the handler. */
  use(handler: Handler): void;
  close(): Promise<void>;
}

/** A tiny local HTTP server answering recorded bodies (127.0.0.1, port 0). */
export async function startFixtureServer(initial: Handler): Promise<FixtureServer> {
  let handler = initial;
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      const reply = handler(recorded);
      if (reply === 'hang') return;
      if (reply === 'reset') {
        req.socket.destroy();
        return;
      }
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    use(next) {
      handler = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export async function startSimulator(
  options: Parameters<typeof createSimulatorServer>[0] = {},
): Promise<{ sim: SimulatorServer; urls: SimulatorUrls; close: () => Promise<void> }> {
  const sim = createSimulatorServer(options);
  const { urls } = await sim.listen(0, '127.0.0.1');
  return { sim, urls, close: () => sim.close() };
}

/** A URL nothing listens on (a port bound and released). */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
