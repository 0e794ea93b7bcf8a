import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/fakes/webhook-receiver.js';
import type { TestKey } from '../../../test/helpers/app.js';
import {
  isBatchJobEvent,
  OpenVat,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
} from '../src/index.js';
import { freePort } from './ports.js';
import { type RunningService, startService } from './service.js';

async function verifyFails(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof WebhookVerificationError, String(error));
    return error.reason;
  }
  assert.fail('expected verification to fail');
}

/** Webhook deliveries sent by the real service's worker, verified with the client's `verifyWebhook`. */
describe('verifyWebhook on real deliveries', () => {
  let service: RunningService;
  let receiver: WebhookReceiver;
  let live: TestKey;
  let openvat: OpenVat;
  let secret: string;

  before(async () => {
    service = await startService();
    receiver = await startWebhookReceiver({ port: await freePort() });
    live = await service.t.key('pro', 'live');
    openvat = new OpenVat({ baseUrl: service.baseUrl, apiKey: live.key });
    secret = (await openvat.webhooks.create({ url: `${receiver.origin}/hooks` })).data.secret;
  });
  after(async () => {
    await service.close();
    await receiver.close();
  });

  it('accepts a live validation.completed delivery and types its payload', async () => {
    const answer = await openvat.validate({ vat_number: 'DE136695976', cache: false });
    await receiver.waitFor(1, 10_000);
    const delivery = receiver.received[0];
    assert.ok(delivery);
    const event: WebhookEvent = await verifyWebhook(delivery.body, delivery.headers, secret);
    assert.equal(event.event, 'validation.completed');
    if (event.event !== 'validation.completed') return;
    assert.equal(event.data.meta.request_id, answer.meta.request_id);
    assert.equal(event.data.data.vat_number, 'DE136695976');
    assert.deepEqual(event.data.data, answer.data);

    // The same delivery through a fetch Headers object and as bytes.
    const headers = new Headers();
    for (const [name, value] of Object.entries(delivery.headers))
      if (typeof value === 'string') headers.set(name, value);
    const again = await verifyWebhook(new TextEncoder().encode(delivery.body), headers, secret);
    assert.deepEqual(again, event);
  });

  it('refuses a changed body, another secret, missing headers and replays outside the tolerance', async () => {
    const delivery = receiver.received[0];
    assert.ok(delivery);
    const { headers, body } = delivery;
    assert.equal(
      await verifyFails(verifyWebhook(body.replace('DE136695976', 'DE136695977'), headers, secret)),
      'invalid_signature',
    );
    assert.equal(await verifyFails(verifyWebhook(`${body} `, headers, secret)), 'invalid_signature');
    assert.equal(await verifyFails(verifyWebhook(body, headers, `${secret}x`)), 'invalid_signature');
    assert.equal(
      await verifyFails(verifyWebhook(body, { ...headers, 'service-signature': 'sha256=zz' }, secret)),
      'invalid_signature',
    );
    assert.equal(
      await verifyFails(verifyWebhook(body, { ...headers, 'service-signature': undefined }, secret)),
      'missing_header',
    );
    assert.equal(
      await verifyFails(verifyWebhook(body, { ...headers, 'service-timestamp': 'yesterday' }, secret)),
      'invalid_timestamp',
    );
    const sentAt = Number(headers['service-timestamp']) * 1000;
    assert.equal(
      await verifyFails(verifyWebhook(body, headers, secret, { now: new Date(sentAt + 301_000) })),
      'timestamp_too_old',
    );
    assert.equal(
      await verifyFails(verifyWebhook(body, headers, secret, { now: new Date(sentAt - 301_000) })),
      'timestamp_in_future',
    );
    // A wider tolerance accepts the same replay.
    const late = await verifyWebhook(body, headers, secret, {
      now: new Date(sentAt + 301_000),
      toleranceSeconds: 600,
    });
    assert.equal(late.event, 'validation.completed');
    // A second signature (a sender rotating secrets) is accepted alongside.
    const rotated = {
      ...headers,
      'service-signature': `sha256=${'0'.repeat(64)} ${headers['service-signature']}`,
    };
    assert.equal((await verifyWebhook(body, rotated, secret)).event, 'validation.completed');
  });

  it('accepts the batch.completed of a synchronous validateBatch and types it apart from a job', async () => {
    const count = receiver.received.length;
    const answer = await openvat.validateBatch({ vat_numbers: ['DE136695976', 'FR40303265045'] });
    await receiver.waitFor(count + 1, 10_000);
    const events = await Promise.all(
      receiver.received.slice(count).map((d) => verifyWebhook(d.body, d.headers, secret)),
    );
    const completed = events.find((e) => e.event === 'batch.completed');
    assert.ok(completed && completed.event === 'batch.completed');
    if (isBatchJobEvent(completed)) assert.fail('a synchronous batch has no job id');
    // Narrowed to the synchronous answer: summary and results in data, sources in meta.
    assert.deepEqual(completed.data.data.summary, answer.data.summary);
    assert.deepEqual(completed.data.meta.sources, answer.meta.sources);
    assert.equal(completed.data.data.results.length, 2);
    assert.equal(completed.data.meta.request_id, answer.meta.request_id);
  });

  it('accepts a live batch.completed delivery', async () => {
    const count = receiver.received.length;
    const job = await openvat.batchJobs.wait(
      (await openvat.batchJobs.create({ vat_numbers: ['DE136695976', 'FR40303265045'] })).data.id,
      { pollInterval: 50 },
    );
    await receiver.waitFor(count + 1, 10_000);
    const events = await Promise.all(
      receiver.received.slice(count).map((d) => verifyWebhook(d.body, d.headers, secret)),
    );
    const completed = events.find((e) => e.event === 'batch.completed');
    assert.ok(completed && completed.event === 'batch.completed');
    assert.ok(isBatchJobEvent(completed), 'a job event has the job id');
    assert.equal(completed.data.data.id, job.id);
    assert.deepEqual(completed.data.data.summary, job.summary);
  });
});

const EXAMPLES = fileURLToPath(new URL('../examples/', import.meta.url));

interface RunningExample {
  child: ChildProcess;
  url: string;
  lines: string[];
  waitForLine(match: string, timeoutMs?: number): Promise<string>;
}

/** Runs an example file as written (through tsx, `@openvat/client` resolved to this source). */
async function runExample(file: string, env: Record<string, string>): Promise<RunningExample> {
  const child = spawn(process.execPath, ['--conditions=openvat-source', '--import', 'tsx', EXAMPLES + file], {
    env: { ...process.env, ...env, PORT: String(await freePort()) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  let stderr = '';
  let buffered = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts);
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const waitForLine = async (match: string, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = lines.find((l) => l.includes(match));
      if (line) return line;
      if (Date.now() > deadline || child.exitCode !== null) {
        throw new Error(`${file}: no line with "${match}"; stdout: ${lines.join('\n')}; stderr: ${stderr}`);
      }
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  };
  const listening = await waitForLine('listening on ');
  const url = /listening on (http:\/\/\S+)/.exec(listening)?.[1];
  assert.ok(url, listening);
  return { child, url, lines, waitForLine };
}

/** Forwards every request unchanged to `target()`: the endpoint is registered before the example runs. */
async function startForwarder(target: () => string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const upstream = httpRequest(
      target() + (req.url ?? '/'),
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

for (const file of ['node-http.ts', 'fastify.ts']) {
  describe(`example receiver ${file}, run as written`, () => {
    let service: RunningService;
    let example: RunningExample;
    let forwarder: { url: string; server: Server };
    let openvat: OpenVat;
    let webhookId: string;

    before(async () => {
      service = await startService();
      openvat = new OpenVat({ baseUrl: service.baseUrl, apiKey: (await service.t.key('pro', 'live')).key });
      let target = '';
      forwarder = await startForwarder(() => target);
      const created = await openvat.webhooks.create({ url: `${forwarder.url}/openvat/webhooks` });
      webhookId = created.data.id;
      example = await runExample(file, { OPENVAT_WEBHOOK_SECRET: created.data.secret });
      target = example.url;
    });
    after(async () => {
      example?.child.kill();
      forwarder?.server.closeAllConnections();
      await new Promise<void>((resolve) => (forwarder ? forwarder.server.close(() => resolve()) : resolve()));
      await service?.close();
    });

    it('answers a signed test event with 204 and logs it', async () => {
      const sent = await openvat.webhooks.test(webhookId);
      assert.equal(sent.data.status, 204);
      assert.equal(sent.data.delivered, true);
      await example.waitForLine('test ');
    });

    it('verifies and logs real deliveries of live calls', async () => {
      const answer = await openvat.validate({ vat_number: 'DE136695976', cache: false });
      const line = await example.waitForLine(answer.meta.request_id);
      assert.match(line, /^validation\.completed /);
    });

    it('answers a forged delivery with 400 and the reason', async () => {
      const res = await fetch(`${example.url}/openvat/webhooks`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'service-timestamp': String(Math.floor(Date.now() / 1000)),
          'service-signature': `sha256=${'a'.repeat(64)}`,
        },
        body: '{"event":"validation.completed","created_at":"2026-01-01T00:00:00Z","data":{}}',
      });
      assert.equal(res.status, 400);
      assert.equal(await res.text(), 'invalid_signature');
    });
  });
}
