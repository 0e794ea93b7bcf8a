// The service's outbound HTTP client (src/lib/http-client.ts, node:http) against undici's
// `request`, both ways the service calls out:
// - registry calls: POST to an IP address, answer read as text under a size cap, a timeout;
// - webhook deliveries: POST to a host name resolved by the SSRF-guarded lookup at connect time,
//   answer read and discarded, a timeout.
// Each client keeps its connections alive. The answering server is a bare node:http process of its
// own (bench/lib.ts startBare), so it does not share the event loop of the clients measured.
// Sequential: one request after the other; concurrent: 50 in flight. Alternated rounds, medians.
// Then connection reuse: how many connections 10 back-to-back calls open after one answer that had
// to be dropped (over the size cap), against an in-process server that counts them.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo, LookupFunction } from 'node:net';
import { Agent, request as undiciRequest } from 'undici';
import { createHttpTransport } from '../src/modules/webhooks/transport.js';
import { guardedLookup } from '../src/modules/webhooks/url-guard.js';
import { clientTransport, DEFAULT_MAX_BODY_BYTES } from '../src/registries/http.js';
import { median, startBare, today, writeResult } from './lib.js';

const SEQUENTIAL = 3_000;
const CONCURRENT = 20_000;
const IN_FLIGHT = 50;
const ROUNDS = 3;
const HOST = 'registry.bench.test';
const ANSWER = JSON.stringify({
  countryCode: 'DE',
  vatNumber: '136695976',
  requestDate: '2026-11-23T10:00:00.000Z',
  valid: true,
  requestIdentifier: 'WAPIAAAAXyZ12345',
  name: 'Beispiel Handelsgesellschaft mbH',
  address: 'Musterstraße 1\n10115 Berlin',
  traderName: '---',
  traderStreet: '---',
  traderPostalCode: '---',
  traderCity: '---',
});
const BODY = JSON.stringify({ countryCode: 'DE', vatNumber: '136695976' });

/** One call; resolves when the answer has been read, throws when it failed. */
type Call = () => Promise<void>;

/** The fake resolver of the webhook variants: the bench host is 127.0.0.1 (private targets allowed). */
const lookup = guardedLookup({
  allowPrivate: true,
  dns: { lookupAll: async () => [{ address: '127.0.0.1', family: 4 }] },
}) as unknown as LookupFunction;

function variants(origin: string, port: number): Record<string, { call: Call; close: () => void }> {
  const registry = clientTransport();
  const webhook = createHttpTransport();
  const plain = new Agent();
  const guarded = new Agent({ connect: { lookup } });
  const named = `http://${HOST}:${port}/`;
  return {
    'registry: node:http (src/registries/http.ts)': {
      async call() {
        const outcome = await registry({
          url: `${origin}/`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: BODY,
          timeoutMs: 10_000,
        });
        if (!outcome.ok || outcome.status !== 200) throw new Error(JSON.stringify(outcome));
      },
      close: () => {},
    },
    'registry: undici.request': {
      async call() {
        const res = await undiciRequest(`${origin}/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': 'openvat' },
          body: BODY,
          dispatcher: plain,
          signal: AbortSignal.timeout(10_000),
        });
        const chunks: Buffer[] = [];
        let total = 0;
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          total += chunk.byteLength;
          if (total > DEFAULT_MAX_BODY_BYTES) throw new Error('too large');
          chunks.push(chunk);
        }
        if (res.statusCode !== 200 || Buffer.concat(chunks, total).toString('utf8') !== ANSWER)
          throw new Error(`status ${res.statusCode}`);
      },
      close: () => void plain.close(),
    },
    'webhook: node:http (src/modules/webhooks/transport.ts)': {
      async call() {
        const response = await webhook.send({
          url: new URL(named),
          headers: { 'Content-Type': 'application/json' },
          body: BODY,
          timeoutMs: 10_000,
          lookup,
        });
        if (response.kind !== 'response' || response.status !== 200)
          throw new Error(JSON.stringify(response));
      },
      close: () => webhook.close(),
    },
    'webhook: undici.request, guarded connect lookup': {
      async call() {
        const res = await undiciRequest(named, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: BODY,
          dispatcher: guarded,
          signal: AbortSignal.timeout(10_000),
        });
        await res.body.dump({ limit: 64 * 1024 });
        if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
      },
      close: () => void guarded.close(),
    },
  };
}

interface Run {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] as number;
}

/** `total` calls with `inFlight` of them outstanding at any time. */
async function drive(call: Call, total: number, inFlight: number): Promise<Run> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) {
        next++;
        const at = performance.now();
        await call();
        latencies.push(performance.now() - at);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const round = (ms: number) => Math.round(ms * 1000) / 1000;
  return {
    requestsPerSecond: Math.round(total / seconds),
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
  };
}

function summary(runs: Run[]): Run {
  return {
    requestsPerSecond: median(runs.map((r) => r.requestsPerSecond)),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
  };
}

/** Connections opened by 10 back-to-back calls made after an answer over the cap was dropped. */
async function connectionsAfterADroppedAnswer(): Promise<Record<string, number>> {
  let big = false;
  let connections = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end(big ? 'x'.repeat(2 * DEFAULT_MAX_BODY_BYTES) : ANSWER));
  });
  server.on('connection', () => {
    connections++;
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const counts: Record<string, number> = {};
  try {
    for (const [name, { call, close }] of Object.entries(variants(origin, 0)).filter(([n]) =>
      n.startsWith('registry'),
    )) {
      big = true;
      await call().catch(() => {});
      big = false;
      connections = 0;
      for (let i = 0; i < 10; i++) await call();
      counts[name] = connections;
      close();
    }
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
  return counts;
}

export async function benchTransport() {
  const server = await startBare(ANSWER, { 'content-type': 'application/json' });
  const port = Number(new URL(server.url).port);
  const clients = variants(server.url, port);
  const names = Object.keys(clients);
  const sequential: Record<string, Run[]> = Object.fromEntries(names.map((n) => [n, []]));
  const concurrent: Record<string, Run[]> = Object.fromEntries(names.map((n) => [n, []]));
  try {
    for (const name of names) await drive(clients[name]!.call, 2_000, IN_FLIGHT); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of names) {
        sequential[name]!.push(await drive(clients[name]!.call, SEQUENTIAL, 1));
        concurrent[name]!.push(await drive(clients[name]!.call, CONCURRENT, IN_FLIGHT));
      }
    }
  } finally {
    for (const name of names) clients[name]!.close();
    await server.stop();
  }
  const reuse = await connectionsAfterADroppedAnswer();
  const result = {
    command: 'npm run bench -- transport',
    date: today(),
    node: process.version,
    undici: (createRequire(import.meta.url)('undici/package.json') as { version: string }).version,
    answerBytes: Buffer.byteLength(ANSWER),
    sequentialRequests: SEQUENTIAL,
    concurrentRequests: CONCURRENT,
    inFlight: IN_FLIGHT,
    rounds: ROUNDS,
    sequential: Object.fromEntries(names.map((n) => [n, summary(sequential[n]!)])),
    concurrent: Object.fromEntries(names.map((n) => [n, summary(concurrent[n]!)])),
    connectionsForTenCallsAfterADroppedAnswer: reuse,
  };
  writeResult('transport', result);
  return result;
}
