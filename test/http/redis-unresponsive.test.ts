import assert from 'node:assert/strict';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Clock } from '../../src/lib/clock.js';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { euNumbers } from '../helpers/batch-numbers.js';
import { redisSkip } from '../helpers/redis.js';
import { redisPrefix } from '../helpers/resources.js';

const skip = await redisSkip();

/**
 * A TCP relay in front of the test Redis that can stall: while stalled it keeps every connection
 * open but forwards nothing, as a Redis that hangs (paused, overloaded, a network that drops
 * packets) looks to its clients.
 */
async function stallableRelay(target: URL): Promise<{ port: number; stall(): void; close(): Promise<void> }> {
  let stalled = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      if (!stalled) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!stalled) client.write(chunk);
    });
    for (const s of [client, upstream]) {
      s.on('error', () => {});
      s.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    stall: () => {
      stalled = true;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('a Redis that stops answering after the start (REDIS_URL)', { skip, timeout: 60_000 }, () => {
  let relay: Awaited<ReturnType<typeof stallableRelay>>;
  let sim: SimulatorServer;
  let t: TestApp;
  let key: TestKey;
  let live: TestKey;

  // The wall clock, moved ahead by a test instead of waiting for the status snapshot's reuse window.
  let ahead = 0;
  const clock: Clock = { now: () => new Date(Date.now() + ahead), millis: () => Date.now() + ahead };

  before(async () => {
    relay = await stallableRelay(new URL(process.env.TEST_REDIS_URL as string));
    sim = createSimulatorServer();
    const { urls } = await sim.listen(0, '127.0.0.1');
    t = await buildTestApp(
      {
        ...urls,
        REDIS_URL: `redis://127.0.0.1:${relay.port}`,
        OPENVAT_REDIS_PREFIX: redisPrefix('unresponsive'),
      },
      { clock },
    );
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    key = await t.key('business');
    live = await t.key('business', 'live');
  });
  after(async () => {
    await t.close();
    await relay.close();
    await sim.close();
  });

  type Answer = {
    status: number;
    body: { data: { vat_number: string }; meta: { request_id: string } };
    ms: number;
  };
  const get = (path: string, headers: Record<string, string> = {}): Promise<Answer> => {
    const { port } = t.app.server.address() as AddressInfo;
    const started = Date.now();
    return fetch(`http://127.0.0.1:${port}${path}`, { headers, signal: AbortSignal.timeout(10_000) }).then(
      async (res) => ({
        status: res.status,
        body: (await res.json()) as Answer['body'],
        ms: Date.now() - started,
      }),
    );
  };

  it('GET /v1/status answers within about a second, however many registries it has seen', async () => {
    // Live calls to six member states while Redis answers: six rows of registry state.
    for (const number of euNumbers(1).slice(0, 6)) {
      const res = await get(`/v1/validate?vat_number=${number}`, live.headers);
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
    relay.stall();
    ahead += 2_100; // past the reuse window of the last snapshot
    const res = await get('/v1/status');
    assert.equal(res.status, 200);
    assert.ok(res.ms < 2_500, `answered after ${res.ms} ms`);
  });

  it('keyed requests pass without the per-key limit within about a second instead of hanging', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await get('/v1/validate?vat_number=DE100000008', key.headers);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.data.vat_number, 'DE100000008');
      assert.ok(res.ms < 3_000, `answered after ${res.ms} ms`);
    }
  });
});
