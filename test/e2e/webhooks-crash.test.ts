import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { type Container, createContainer } from '../../src/container.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.js';
import { builtCli } from '../helpers/cli.js';

const ROOT = resolve(import.meta.dirname, '../..');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Server {
  url: string;
  child: ChildProcess;
  output(): string;
}

async function startServer(env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, [...builtCli, 'serve'], {
    cwd: ROOT,
    env: { ...process.env, ...env, HOST: '127.0.0.1', PORT: String(port) },
    stdio: 'pipe',
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out = (out + d).slice(-20_000);
  });
  child.stderr?.on('data', (d) => {
    out = (out + d).slice(-20_000);
  });
  const url = `http://127.0.0.1:${port}`;
  await until(
    'the server to answer /health',
    async () => {
      if (child.exitCode !== null) throw new Error(`server exited early:\n${out}`);
      return fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      );
    },
    30_000,
  );
  return { url, child, output: () => out };
}

function kill(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise((r) => {
    if (child.exitCode !== null || child.signalCode !== null) return r();
    child.once('exit', () => r());
    child.kill(signal);
  });
}

/**
 * The queue survives `kill -9`: deliveries written while the receiver is down, some already tried and
 * waiting for a retry, some written while the server is dead, are all delivered after a restart.
 */
describe('webhook queue across a crash (real server processes)', { timeout: 180_000 }, () => {
  let dir: string;
  let env: Record<string, string>;
  let container: Container;
  let receiver: WebhookReceiver | null = null;
  const servers: Server[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-webhooks-crash-'));
    env = {
      DATABASE_URL: `sqlite:${join(dir, 'openvat.sqlite')}`,
      LOG_LEVEL: 'warn',
      OPENVAT_WEBHOOKS_ALLOW_PRIVATE: 'true',
      OPENVAT_WEBHOOK_BACKOFF_MS: '1500',
    };
    // A second process on the same database, standing in for the API calls that record events.
    container = await createContainer(loadConfig({ ...env, LOG_LEVEL: 'silent' }));
  });
  after(async () => {
    for (const server of servers) await kill(server.child, 'SIGKILL');
    await receiver?.close();
    await container.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers every queued event after kill -9 and restart', async () => {
    const key = await container.keys.createKey({ plan: 'pro', mode: 'live' });
    const receiverPort = await freePort(); // nothing listens there yet: the receiver is down

    const first = await startServer(env);
    servers.push(first);
    const registered = await fetch(`${first.url}/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${receiverPort}/hook` }),
    });
    assert.equal(registered.status, 201, await registered.clone().text());

    const record = (n: number) =>
      container.outbox.record({
        events: [
          {
            accountId: key.accountId,
            keyId: key.id,
            type: 'validation.completed',
            payload: `{"data":{"n":${n}},"meta":{"request_id":"crash-${n}"}}`,
          },
        ],
      });
    for (let n = 0; n < 10; n += 1) await record(n);

    const deliveries = () => container.db.kysely.selectFrom('webhook_deliveries').selectAll().execute();
    await until('the first server to try every delivery once', async () => {
      const rows = await deliveries();
      return rows.length === 10 && rows.every((r) => r.attempts >= 1);
    });
    await kill(first.child, 'SIGKILL');
    const afterCrash = await deliveries();
    assert.ok(
      afterCrash.every((r) => r.status === 'pending'),
      'nothing was given up on',
    );

    for (let n = 10; n < 15; n += 1) await record(n);

    receiver = await startWebhookReceiver({ port: receiverPort });
    const second = await startServer(env);
    servers.push(second);
    await receiver.waitFor(15, 90_000);
    await until('every delivery to be marked delivered', async () =>
      (await deliveries()).every((r) => r.status === 'delivered'),
    );

    const delivered = new Set(
      receiver.received.map(
        (r) => (JSON.parse(r.body) as { data: { meta: { request_id: string } } }).data.meta.request_id,
      ),
    );
    assert.deepEqual([...delivered].sort(), Array.from({ length: 15 }, (_, n) => `crash-${n}`).sort());
    const rows = await deliveries();
    assert.equal(rows.length, 15);
    assert.ok(rows.every((r) => r.claimed_by === null));
    await kill(second.child, 'SIGTERM');
  });
});
