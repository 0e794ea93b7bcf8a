import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSimulatorServer } from '../src/simulators/server.js';
import { createKey, load, startService, today, updateReadme, warm, writeResult } from './lib.js';

/**
 * The API's own p99 for `GET /v1/validate` (live key, cache hit: every call records a
 * `validation.completed` event) without any webhook endpoint, then with an endpoint whose receiver
 * takes 5 s per request. The delivery queue must keep a slow receiver away from the API.
 */
export async function benchWebhooksApi(duration = 10) {
  const slow = createServer((req, res) => {
    req.resume();
    setTimeout(() => res.writeHead(200).end(), 5_000).unref();
  });
  await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
  const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hook`;
  const sim = createSimulatorServer({ latencyMs: 0 });
  const { urls } = await sim.listen(0, '127.0.0.1');
  const service = await startService({
    VIES_URL: urls.VIES_URL,
    OPENVAT_WEBHOOKS_ALLOW_PRIVATE: 'true',
    OPENVAT_STATUS_POLL_MS: '0',
  });
  try {
    const key = createKey(service.dataDir, 'business', 'live');
    const headers = { authorization: `Bearer ${key}` };
    const url = `${service.url}/v1/validate?vat_number=FR40303265045`;
    if (!(await fetch(url, { headers })).ok) throw new Error('warm-up call failed');
    await warm(url, headers);
    const without = await load(url, { connections: 50, duration, headers });
    const registered = await fetch(`${service.url}/v1/webhooks`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ url: slowUrl }),
    });
    if (registered.status !== 201)
      throw new Error(`registration: ${registered.status} ${await registered.text()}`);
    const withSlow = await load(url, { connections: 50, duration, headers });
    const change = Math.round(((withSlow.p99 - without.p99) / Math.max(1, without.p99)) * 100);
    const result = {
      benchmark:
        'API p99 of GET /v1/validate (live key, cache hit, one event per call) without and with a 5 s webhook receiver',
      command: 'npm run bench -- webhooks-api',
      date: today(),
      node: process.version,
      connections: 50,
      duration_s: duration,
      without_receiver: without,
      with_slow_receiver: withSlow,
      p99_change_percent: change,
      target: 'unchanged within 10%',
    };
    writeResult('webhooks-api', result);
    updateReadme(
      'webhooks-api',
      `| API p99 with a 5 s webhook receiver (${result.date}, \`${result.command}\`) | p99 ${withSlow.p99} ms, ${withSlow.requestsPerSecond.toLocaleString('en')} req/s | without receiver: p99 ${without.p99} ms, ${without.requestsPerSecond.toLocaleString('en')} req/s | ${change >= 0 ? '+' : ''}${change}% (target within 10%) |`,
    );
    return result;
  } finally {
    await service.stop();
    await sim.close();
    await new Promise<void>((r) => slow.close(() => r()));
  }
}
