import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSimulatorServer } from '../src/simulators/server.js';
import {
  createKey,
  type LoadResult,
  load,
  median,
  startService,
  today,
  updatePerformanceTable,
  warm,
  writeResult,
} from './lib.js';

const ROUNDS = 3;
/** A steady load well below saturation, so p99 shows stalls rather than CPU queueing. */
const RATE = 500;
const CONNECTIONS = 10;

async function receiver(delayMs: number): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    if (delayMs === 0) res.writeHead(200).end();
    else setTimeout(() => res.writeHead(200).end(), delayMs).unref();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };
}

/**
 * Does a slow receiver slow the API? `GET /v1/validate` (live key, cache hit, so every call records a
 * `validation.completed` event and a delivery row) is loaded with two keys of the same service in
 * alternating rounds: one whose endpoint answers at once, one whose endpoint takes 5 s per request
 * (its deliveries pile up in the queue), at a steady 500 req/s. A key without any endpoint is measured
 * for reference.
 */
export async function benchWebhooksApi(duration = 8) {
  const fast = await receiver(0);
  const slow = await receiver(5_000);
  const sim = createSimulatorServer({ latencyMs: 0 });
  const { urls } = await sim.listen(0, '127.0.0.1');
  const service = await startService({
    VIES_URL: urls.VIES_URL,
    OPENVAT_WEBHOOKS_ALLOW_PRIVATE: 'true',
    OPENVAT_STATUS_POLL_MS: '0',
  });
  try {
    const keys = {
      none: createKey(service.dataDir, 'business', 'live'),
      fast: createKey(service.dataDir, 'business', 'live'),
      slow: createKey(service.dataDir, 'business', 'live'),
    };
    const headersOf = (key: string) => ({ authorization: `Bearer ${key}` });
    for (const [name, target] of [
      ['fast', fast.url],
      ['slow', slow.url],
    ] as const) {
      const res = await fetch(`${service.url}/v1/webhooks`, {
        method: 'POST',
        headers: { ...headersOf(keys[name]), 'content-type': 'application/json' },
        body: JSON.stringify({ url: target }),
      });
      if (res.status !== 201) throw new Error(`registration: ${res.status} ${await res.text()}`);
    }
    const url = `${service.url}/v1/validate?vat_number=FR40303265045`;
    if (!(await fetch(url, { headers: headersOf(keys.none) })).ok) throw new Error('warm-up call failed');
    await warm(url, headersOf(keys.none));
    const none = await load(url, {
      connections: CONNECTIONS,
      rate: RATE,
      duration,
      headers: headersOf(keys.none),
    });
    const rounds: Array<{ fast: LoadResult; slow: LoadResult }> = [];
    for (let i = 0; i < ROUNDS; i++) {
      const f = await load(url, {
        connections: CONNECTIONS,
        rate: RATE,
        duration,
        headers: headersOf(keys.fast),
      });
      const s = await load(url, {
        connections: CONNECTIONS,
        rate: RATE,
        duration,
        headers: headersOf(keys.slow),
      });
      rounds.push({ fast: f, slow: s });
    }
    const fastP99 = median(rounds.map((r) => r.fast.p99));
    const slowP99 = median(rounds.map((r) => r.slow.p99));
    const change = Math.round(((slowP99 - fastP99) / Math.max(1, fastP99)) * 100);
    const result = {
      benchmark:
        'API p99 of GET /v1/validate (live key, cache hit, one event and delivery per call): endpoint answering at once vs endpoint taking 5 s, alternating rounds',
      command: 'npm run bench -- webhooks-api',
      date: today(),
      node: process.version,
      connections: CONNECTIONS,
      rate_per_second: RATE,
      rounds: ROUNDS,
      duration_per_round_s: duration,
      median: {
        fast_receiver_p99_ms: fastP99,
        slow_receiver_p99_ms: slowP99,
        fast_receiver_rps: Math.round(median(rounds.map((r) => r.fast.requestsPerSecond))),
        slow_receiver_rps: Math.round(median(rounds.map((r) => r.slow.requestsPerSecond))),
      },
      p99_change_percent: change,
      no_endpoint_reference: none,
      per_round: rounds,
      target: 'unchanged within 10%',
    };
    writeResult('webhooks-api', result);
    updatePerformanceTable(
      'webhooks-api',
      `| API p99 with a 5 s webhook receiver (${result.date}, \`${result.command}\`, ${RATE} req/s, median of ${ROUNDS} alternating rounds) | p99 ${slowP99} ms, ${result.median.slow_receiver_rps.toLocaleString('en')} req/s | receiver answering at once: p99 ${fastP99} ms, ${result.median.fast_receiver_rps.toLocaleString('en')} req/s (no endpoint: p99 ${none.p99} ms) | ${change >= 0 ? '+' : ''}${change}% (target within 10%) |`,
    );
    return result;
  } finally {
    await service.stop();
    await sim.close();
    for (const r of [fast, slow]) await new Promise<void>((done) => r.server.close(() => done()));
  }
}
