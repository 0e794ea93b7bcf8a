import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createKey, type LoadResult, load, median, startService, today, warm, writeResult } from './lib.js';

const ROUNDS = 3;
const SLOW_CLIENTS = 300;
const REQUEST_TIMEOUT_MS = 5_000;

/** `count` authenticated clients that each send request headers, then one body byte per second, never finishing. */
async function trickle(url: string, count: number, key: string) {
  const { hostname, port } = new URL(url);
  const sockets: Socket[] = [];
  let closed = 0;
  for (let i = 0; i < count; i++) {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.on('error', () => {});
    // Read what the server sends, so that its closing the connection is seen here.
    socket.resume();
    socket.on('close', () => {
      closed++;
    });
    await once(socket, 'connect');
    socket.write(
      `POST /v1/validate/batch HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
    );
    sockets.push(socket);
  }
  const timer = setInterval(() => {
    for (const socket of sockets) if (socket.writable) socket.write(' ');
  }, 1_000);
  return {
    closed: () => closed,
    stop() {
      clearInterval(timer);
      for (const socket of sockets) socket.destroy();
    },
  };
}

/**
 * `GET /v1/rates/de` latency with and without ${SLOW_CLIENTS} clients trickling request bodies, in
 * alternating rounds, on one service process with OPENVAT_REQUEST_TIMEOUT_MS=${REQUEST_TIMEOUT_MS};
 * and how many of the slow clients the server had cut off by the end of each loaded round.
 */
export async function benchSlowClients(duration = 4) {
  const service = await startService({ OPENVAT_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) });
  try {
    const url = `${service.url}/v1/rates/de`;
    // Authenticated, so the body is awaited and only the request timeout can end it.
    const key = createKey(service.dataDir, 'business', 'test');
    await warm(url);
    const rounds: Array<{ quiet: LoadResult; slow: LoadResult; slowClientsCutOff: number }> = [];
    for (let i = 0; i < ROUNDS; i++) {
      const quiet = await load(url, { connections: 10, duration });
      const slowClients = await trickle(service.url, SLOW_CLIENTS, key);
      const slow = await load(url, { connections: 10, duration });
      // Let the request timeout pass for every slow client, then count those the server closed.
      await sleep(REQUEST_TIMEOUT_MS * 1.25 + 500 - duration * 1_000);
      rounds.push({ quiet, slow, slowClientsCutOff: slowClients.closed() });
      slowClients.stop();
      await sleep(200);
    }
    const result = {
      benchmark: `GET /v1/rates/de, 10 connections, alone vs with ${SLOW_CLIENTS} clients trickling bodies`,
      command: 'npm run bench -- slow-clients',
      date: today(),
      node: process.version,
      request_timeout_ms: REQUEST_TIMEOUT_MS,
      rounds: ROUNDS,
      duration_per_round_s: duration,
      median: {
        quiet: {
          rps: median(rounds.map((r) => r.quiet.requestsPerSecond)),
          p50_ms: median(rounds.map((r) => r.quiet.p50)),
          p99_ms: median(rounds.map((r) => r.quiet.p99)),
        },
        with_slow_clients: {
          rps: median(rounds.map((r) => r.slow.requestsPerSecond)),
          p50_ms: median(rounds.map((r) => r.slow.p50)),
          p99_ms: median(rounds.map((r) => r.slow.p99)),
        },
        slow_clients_cut_off: median(rounds.map((r) => r.slowClientsCutOff)),
      },
      rounds_detail: rounds,
    };
    writeResult('slow-clients', result);
    return result;
  } finally {
    await service.stop();
  }
}
