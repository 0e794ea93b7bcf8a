import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createHttpClient, type OutboundOutcome } from '../../src/lib/http-client.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

describe('the outbound HTTP client', () => {
  let server: Server;
  let port: number;
  let handler: Handler = (_req, res) => res.end('ok');
  const client = createHttpClient();
  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => handler(req, res));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const post = (extra: {
    read?: 'text' | 'discard';
    timeoutMs?: number;
    lookup?: LookupFunction;
    host?: string;
  }) =>
    client.request({
      url: `http://${extra.host ?? '127.0.0.1'}:${port}/`,
      method: 'POST',
      body: '{}',
      timeoutMs: extra.timeoutMs ?? 2000,
      maxBodyBytes: 1000,
      ...(extra.read ? { read: extra.read } : {}),
      ...(extra.lookup ? { lookup: extra.lookup } : {}),
    });
  const failed = (outcome: OutboundOutcome) => {
    assert.equal(outcome.ok, false, JSON.stringify(outcome));
    return outcome as Extract<OutboundOutcome, { ok: false }>;
  };

  it('when only the status matters, an answer over the cap or cut short still counts with its status', async () => {
    handler = (_req, res) => res.writeHead(502).end('x'.repeat(5000));
    assert.deepEqual(
      { ...(await post({ read: 'discard' })), headers: null },
      { ok: true, status: 502, headers: null, body: '' },
    );
    handler = (_req, res) => {
      res.writeHead(201, { 'transfer-encoding': 'chunked' });
      for (let i = 0; i < 5; i++) res.write('y'.repeat(1000));
      res.end();
    };
    const streamed = await post({ read: 'discard' });
    assert.ok(streamed.ok);
    assert.equal(streamed.status, 201);
    assert.equal(failed(await post({})).kind, 'too_large');
    handler = (_req, res) => {
      res.writeHead(202, { 'content-length': '900' });
      res.write('partial');
      setTimeout(() => res.socket?.destroy(), 20);
    };
    const cut = await post({ read: 'discard' });
    assert.ok(cut.ok);
    assert.equal(cut.status, 202);
    assert.equal(failed(await post({})).kind, 'network');
  });

  it('a body that stops coming after the status is a timeout in either mode', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-length': '900' });
      res.write('partial');
    };
    assert.equal(failed(await post({ read: 'discard', timeoutMs: 100 })).kind, 'timeout');
    assert.equal(failed(await post({ timeoutMs: 100 })).kind, 'timeout');
  });

  it('resolves a host name through the request lookup when connecting, and reports its refusal', async () => {
    handler = (_req, res) => res.end('ok');
    const asked: string[] = [];
    const lookup = ((hostname, _options, callback) => {
      asked.push(hostname);
      callback(null, [{ address: '127.0.0.1', family: 4 }]);
    }) as LookupFunction;
    const answered = await post({ host: 'receiver.test', lookup });
    assert.ok(answered.ok);
    assert.equal(answered.body, 'ok');
    assert.deepEqual(asked, ['receiver.test']);
    const refusing = ((_hostname, _options, callback) => {
      callback(Object.assign(new Error('receiver.test is not allowed'), { code: 'EREFUSEDHOST' }), '');
    }) as LookupFunction;
    const refused = failed(await post({ host: 'other.test', lookup: refusing }));
    assert.equal(refused.kind, 'network');
    assert.equal(refused.code, 'EREFUSEDHOST');
    assert.equal(refused.detail, 'receiver.test is not allowed');
  });
});
