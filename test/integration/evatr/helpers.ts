import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveSimulators } from '../../../src/simulators/server.js';
import type { SimulatorModule } from '../../../src/simulators/types.js';

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

async function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Mounts a simulator module the way `openvat simulate` does: by prefix, on a local server. */
export async function startSimulator(sim: SimulatorModule): Promise<RunningServer> {
  const server = serveSimulators({ [sim.prefix.slice(1)]: sim });
  const { base } = await server.listen(0, '127.0.0.1');
  return { url: base, close: () => server.close() };
}

export interface Exchange {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** The client's port: calls on one kept-alive connection share it. */
  remotePort: number | undefined;
}

/** A tiny server whose answer the test scripts; it records every request byte for byte. */
export async function startScriptedServer(
  answer: (exchange: Exchange, res: ServerResponse) => void,
): Promise<RunningServer & { exchanges: Exchange[] }> {
  const exchanges: Exchange[] = [];
  const server = createServer(async (req, res) => {
    const exchange = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body: await readBody(req),
      remotePort: req.socket.remotePort,
    };
    exchanges.push(exchange);
    answer(exchange, res);
  });
  const url = await listen(server);
  return { url, exchanges, close: () => stop(server) };
}

/** A server that accepts connections and requests but never answers. */
export async function startHangingServer(): Promise<RunningServer> {
  const server = createServer(() => {});
  const url = await listen(server);
  return { url, close: () => stop(server) };
}

/** A URL on which nothing listens (a port that was just released). */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  const url = await listen(server);
  await stop(server);
  return url;
}
