import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildTestApp, type TestApp } from '../helpers/app.js';

/** Opens a raw socket to the server. */
async function open(port: number): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  return socket;
}

/** Sends `text` one byte every `everyMs` until the socket closes; resolves with what the server sent. */
function trickle(socket: Socket, text: string, everyMs: number): Promise<{ received: string; sent: number }> {
  let received = '';
  let sent = 0;
  socket.on('data', (chunk) => {
    received += chunk.toString('latin1');
  });
  socket.on('error', () => {});
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (socket.destroyed || !socket.writable || sent >= text.length) return;
      socket.write(text[sent] as string);
      sent += 1;
    }, everyMs);
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ received, sent });
    });
  });
}

/** A plain GET over a fresh connection; resolves with the status line. */
async function get(port: number, path: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  await res.arrayBuffer();
  return String(res.status);
}

/**
 * Slow clients are cut off by the configured timeouts while everyone else is still answered, over
 * real sockets (the limits live in Node's HTTP server, which `inject` bypasses).
 */
describe('connection limits against slow clients', () => {
  let t: TestApp;
  let port: number;

  before(async () => {
    t = await buildTestApp({
      OPENVAT_PLAYGROUND: 'false',
      OPENVAT_REQUEST_TIMEOUT_MS: '1000',
      OPENVAT_HEADERS_TIMEOUT_MS: '600',
      OPENVAT_KEEP_ALIVE_TIMEOUT_MS: '500',
    });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as { port: number }).port;
  });
  after(() => t.close());

  it('a client trickling a body is cut off, and normal requests are answered meanwhile', async () => {
    const body = JSON.stringify({ vat_numbers: Array.from({ length: 50 }, () => 'DE100000008') });
    const key = await t.key('business', 'test');
    const socket = await open(port);
    socket.write(
      `POST /v1/validate/batch HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    const slow = trickle(socket, body, 50);
    const answered: string[] = [];
    while (!socket.destroyed) {
      answered.push(await get(port, '/health'));
      await sleep(100);
    }
    const { received, sent } = await slow;
    assert.ok(sent < body.length, `the body was not accepted to its end (${sent} of ${body.length} bytes)`);
    assert.match(received, /^HTTP\/1\.1 408 /, received);
    const envelope = JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4));
    assert.equal(typeof envelope.error.code, 'string');
    assert.match(received, new RegExp(`Service-Request-Id: ${envelope.meta.request_id}`));
    assert.match(received, new RegExp(`X-Request-Id: ${envelope.meta.request_id}`));
    assert.ok(answered.length >= 3, 'normal requests went on while the slow one was pending');
    assert.ok(
      answered.every((s) => s === '200'),
      answered.join(','),
    );
  });

  it('a trickling client that never reads nor closes still loses its connection on the server side', async () => {
    const key = await t.key('business', 'test');
    const connections = () =>
      new Promise<number>((resolve, reject) =>
        t.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      );
    const socket = connect({ host: '127.0.0.1', port });
    socket.on('error', () => {});
    await once(socket, 'connect');
    socket.pause(); // never reads: the server's answer and its FIN stay unread
    socket.write(
      `POST /v1/validate/batch HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key.key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
    );
    const timer = setInterval(() => {
      if (!socket.destroyed) socket.write(' ', () => {});
    }, 50);
    try {
      assert.equal(await connections(), 1);
      let open = 1;
      for (let i = 0; i < 100 && open > 0; i++) {
        await sleep(50);
        open = await connections();
      }
      assert.equal(open, 0, 'the server released the socket');
    } finally {
      clearInterval(timer);
      socket.destroy();
    }
  });

  it('a client refused before its body arrived is disconnected, not left trickling the rest', async () => {
    const socket = await open(port);
    socket.write(
      'POST /v1/validate/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
    );
    const { received, sent } = await trickle(socket, ' '.repeat(100_000), 50);
    assert.match(received, /^HTTP\/1\.1 401 /, received);
    const head = received.slice(0, received.indexOf('\r\n\r\n'));
    assert.match(head, /\r\nconnection: close/i, 'the refusal itself closes the connection');
    assert.doesNotMatch(received, /408/, 'closed with the refusal, not later by the request timeout');
    assert.ok(sent < 100, `the socket was closed after the refusal (${sent} bytes trickled)`);
  });

  it('a client trickling its headers (slowloris) is cut off', async () => {
    const socket = await open(port);
    const headers = `GET /health HTTP/1.1\r\nHost: x\r\n${'X-Pad: y\r\n'.repeat(200)}\r\n`;
    const { sent } = await trickle(socket, headers, 20);
    assert.ok(
      sent < headers.length,
      `the headers were not accepted to their end (${sent} of ${headers.length})`,
    );
    assert.equal(await get(port, '/health'), '200');
  });

  it('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    const socket = await open(port);
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    const { received } = await trickle(socket, '', 50);
    assert.match(received, /^HTTP\/1\.1 200/);
  });
});

describe('connection cap', () => {
  let t: TestApp;
  let port: number;

  before(async () => {
    t = await buildTestApp({ OPENVAT_PLAYGROUND: 'false', OPENVAT_MAX_CONNECTIONS: '2' });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as { port: number }).port;
  });
  after(() => t.close());

  it('connections beyond the cap are closed at once; freed slots are usable again', async () => {
    const held = [await open(port), await open(port)];
    await sleep(50);
    const extra = await open(port);
    const { received } = await trickle(extra, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n', 1);
    assert.equal(received, '', 'the connection over the cap got no answer');
    for (const socket of held) socket.destroy();
    await sleep(50);
    assert.equal(await get(port, '/health'), '200');
  });
});
