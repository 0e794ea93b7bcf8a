import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { connectRedis } from '../../src/container/redis.js';

/**
 * A TCP server that records the first bytes each connection sends and then closes it: what a
 * client opens with tells a TLS handshake (a handshake record, 0x16, of TLS 1.x, 0x03) from the
 * plain Redis protocol.
 */
async function recordingServer() {
  const firstBytes: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('data', (data) => {
      firstBytes.push(data.subarray(0, 3));
      socket.destroy();
    });
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    port,
    firstBytes,
    close: () =>
      new Promise<void>((r) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => r());
      }),
  };
}

describe('REDIS_URL with rediss://', () => {
  it('opens the connection with a TLS handshake; redis:// speaks plain Redis', async () => {
    const server = await recordingServer();
    try {
      await assert.rejects(
        connectRedis(`rediss://:secret@127.0.0.1:${server.port}`),
        (error: Error) =>
          error.message.startsWith(`REDIS_URL rediss://***@127.0.0.1:${server.port} does not answer (`) &&
          !error.message.includes('secret'),
      );
      const tls = server.firstBytes[0];
      assert.ok(tls, 'the client connected');
      assert.equal(tls[0], 0x16, 'a TLS handshake record');
      assert.equal(tls[1], 0x03, 'of TLS 1.x');

      server.firstBytes.length = 0;
      await assert.rejects(connectRedis(`redis://127.0.0.1:${server.port}`), /does not answer/);
      const plain = server.firstBytes[0];
      assert.ok(plain, 'the client connected');
      assert.equal(plain.toString('latin1', 0, 1), '*', 'a Redis command (RESP array)');
    } finally {
      await server.close();
    }
  });
});
