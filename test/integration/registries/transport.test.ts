import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  clientTransport,
  fetchTransport,
  type HttpOutcome,
  type Transport,
} from '../../../src/registries/http.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

describe('registry transports against a raw HTTP server', () => {
  let server: Server;
  let base: string;
  let handler: Handler = () => {};
  let connections = 0;
  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => handler(req, res, Buffer.concat(chunks).toString('utf8')));
    });
    server.on('connection', () => {
      connections++;
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const transports: Array<[string, () => Transport]> = [
    ['http client', () => clientTransport()],
    ['fetch', () => fetchTransport(fetch)],
  ];

  for (const [name, make] of transports) {
    describe(name, () => {
      it('sends the method, headers and body, and reads status, headers and a UTF-8 body', async () => {
        let seen: { method?: string; headers?: IncomingMessage['headers']; body?: string } = {};
        handler = (req, res, body) => {
          seen = { method: req.method ?? '', headers: req.headers, body };
          res.writeHead(429, { 'content-type': 'application/json', 'Retry-After': '7' });
          res.end('{"name":"Müller GmbH"}');
        };
        const outcome = await make()({
          url: `${base}/check`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"vat":"DE136695976","name":"Bäcker"}',
          timeoutMs: 2000,
        });
        assert.equal(seen.method, 'POST');
        assert.equal(seen.body, '{"vat":"DE136695976","name":"Bäcker"}');
        assert.equal(seen.headers?.['content-type'], 'application/json');
        assert.match(seen.headers?.['user-agent'] ?? '', /^openvat/);
        assert.ok(outcome.ok);
        assert.equal(outcome.status, 429);
        assert.equal(outcome.headers.get('retry-after'), '7');
        assert.equal(outcome.headers.get('Retry-After'), '7');
        assert.equal(outcome.headers.get('x-missing'), null);
        assert.equal(outcome.body, '{"name":"Müller GmbH"}');
      });

      it('refuses a body over the cap, whether it is announced or streamed', async () => {
        const send = make();
        handler = (_req, res) => res.end('x'.repeat(5000));
        const announced = await send({ url: `${base}/`, method: 'GET', timeoutMs: 2000, maxBodyBytes: 1000 });
        handler = (_req, res) => {
          res.writeHead(200, { 'transfer-encoding': 'chunked' });
          for (let i = 0; i < 5; i++) res.write('y'.repeat(1000));
          res.end();
        };
        const streamed = await send({ url: `${base}/`, method: 'GET', timeoutMs: 2000, maxBodyBytes: 1000 });
        for (const outcome of [announced, streamed]) {
          assert.equal(outcome.ok, false);
          assert.equal((outcome as Extract<HttpOutcome, { ok: false }>).kind, 'too_large');
        }
      });

      it('reports a hang as a timeout and a cancelled call as cancelled', async () => {
        const send = make();
        handler = () => {};
        const hung = await send({ url: `${base}/`, method: 'GET', timeoutMs: 100 });
        assert.deepEqual(hung, { ok: false, kind: 'timeout', message: 'no answer within 100 ms' });
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 50);
        const cancelled = await send({
          url: `${base}/`,
          method: 'GET',
          timeoutMs: 5000,
          signal: controller.signal,
        });
        assert.equal(cancelled.ok, false);
        assert.equal((cancelled as Extract<HttpOutcome, { ok: false }>).kind, 'timeout');
        assert.match((cancelled as Extract<HttpOutcome, { ok: false }>).message, /cancelled/);
      });

      it('reports a refused connection and a connection cut mid-answer as network failures', async () => {
        const send = make();
        const closed = createServer();
        await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
        const port = (closed.address() as AddressInfo).port;
        await new Promise<void>((r) => closed.close(() => r()));
        const refused = await send({ url: `http://127.0.0.1:${port}/`, method: 'GET', timeoutMs: 2000 });
        assert.equal(refused.ok, false);
        assert.equal((refused as Extract<HttpOutcome, { ok: false }>).kind, 'network');
        assert.match((refused as Extract<HttpOutcome, { ok: false }>).message, /ECONNREFUSED/);
        handler = (_req, res) => {
          res.writeHead(200, { 'content-length': '1000' });
          res.write('partial');
          setTimeout(() => res.socket?.destroy(), 20);
        };
        const cut = await send({ url: `${base}/`, method: 'GET', timeoutMs: 2000 });
        assert.equal(cut.ok, false);
        assert.equal((cut as Extract<HttpOutcome, { ok: false }>).kind, 'network');
      });
    });
  }

  it('the http client keeps connections alive between calls', async () => {
    const send = clientTransport();
    handler = (_req, res) => res.end('ok');
    const before = connections;
    for (let i = 0; i < 10; i++) {
      assert.ok((await send({ url: `${base}/`, method: 'GET', timeoutMs: 2000 })).ok);
      // The agent takes the socket back once the response is done with it.
      await new Promise((r) => setImmediate(r));
    }
    assert.equal(connections - before, 1, 'one connection for ten calls');
  });
});
