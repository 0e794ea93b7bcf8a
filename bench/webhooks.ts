import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';
import { today, updatePerformanceTable, writeResult } from './lib.js';

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/**
 * 10,000 `validation.completed` events, each recorded in its own transaction (as an API call does) on
 * the embedded SQLite database, delivered by the real worker over HTTP to a local receiver answering
 * 200. Measures deliveries per second (first event recorded → last delivery received) and the time
 * from recording an event to its receipt.
 */
export async function benchWebhooks(events = 10_000) {
  const dir = mkdtempSync(join(tmpdir(), 'openvat-bench-webhooks-'));
  const received: number[] = [];
  let lastReceipt = 0;
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { data: { t: number } } };
      received.push(now - body.data.data.t);
      lastReceipt = now;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const { port } = receiver.address() as AddressInfo;

  const container = await createContainer(
    loadConfig({
      DATABASE_URL: `sqlite:${join(dir, 'openvat.sqlite')}`,
      LOG_LEVEL: 'silent',
      OPENVAT_WEBHOOKS_ALLOW_PRIVATE: 'true',
    }),
  );
  try {
    const key = await container.keys.createKey({ plan: 'business', mode: 'live' });
    const found = await container.keys.authenticate(key.key);
    if (found.kind === 'refused') throw new Error(`key not found: ${found.message}`);
    const { principal } = found;
    const registered = await container.webhooks.register(principal, `http://127.0.0.1:${port}/hook`);
    if (registered.kind === 'refused') throw new Error(`registration failed: ${JSON.stringify(registered)}`);

    container.webhookWorker.start();
    const started = performance.now();
    for (let n = 0; n < events; n += 1) {
      const payload = `{"data":{"n":${n},"t":${performance.now()}},"meta":{"request_id":"bench-${n}"}}`;
      await container.outbox.record({
        events: [
          { accountId: principal.accountId, keyId: principal.id, type: 'validation.completed', payload },
        ],
      });
    }
    const recorded = performance.now();
    const deadline = Date.now() + 300_000;
    while (received.length < events && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await container.webhookWorker.stop();

    const sorted = [...received].sort((a, b) => a - b);
    const seconds = (lastReceipt - started) / 1000;
    const result = {
      benchmark: `${events.toLocaleString('en')} webhook events on embedded SQLite to a local receiver`,
      command: 'npm run bench -- webhooks',
      date: today(),
      node: process.version,
      events,
      delivered: received.length,
      events_recorded_per_second: Math.round(events / ((recorded - started) / 1000)),
      deliveries_per_second: Math.round(received.length / seconds),
      latency_ms: {
        p50: Math.round(percentile(sorted, 50)),
        p99: Math.round(percentile(sorted, 99)),
        max: Math.round(sorted.at(-1) ?? 0),
      },
    };
    writeResult('webhooks', result);
    updatePerformanceTable(
      'webhooks',
      `| Webhooks: ${result.benchmark} (${result.date}, \`${result.command}\`) | ${result.deliveries_per_second.toLocaleString('en')} deliveries/s, event → receipt p50 ${result.latency_ms.p50} ms, p99 ${result.latency_ms.p99} ms | events recorded at ${result.events_recorded_per_second.toLocaleString('en')}/s alongside | ${result.delivered}/${events} delivered |`,
    );
    return result;
  } finally {
    await container.close();
    await new Promise<void>((r) => receiver.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  }
}
