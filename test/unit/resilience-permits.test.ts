import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import {
  adaptiveLimit,
  adaptiveThrottled,
  createPermits,
  type Permit,
  type RedisLike,
} from '../../src/registries/resilience.js';
import { redisSkip } from '../helpers/redis.js';
import { redisPrefix } from '../helpers/resources.js';

const skip = await redisSkip();
const clients: Redis[] = [];
after(() => {
  for (const c of clients) c.disconnect();
});
const connect = () => {
  const c = new Redis(process.env.TEST_REDIS_URL as string);
  clients.push(c);
  return c;
};
const prefix = () => redisPrefix('permits');

/** Resolves with the order in which the given acquisitions were granted. */
function order(entries: Array<[string, Promise<Permit>]>): {
  granted: string[];
  permits: Map<string, Permit>;
} {
  const granted: string[] = [];
  const permits = new Map<string, Permit>();
  for (const [name, p] of entries) {
    p.then((permit) => {
      granted.push(name);
      permits.set(name, permit);
    });
  }
  return { granted, permits };
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await sleep(10);
  }
  assert.fail(`timed out waiting for ${what}`);
}

describe('permits in this process', () => {
  it('holds the limit per key, FIFO, and interactive callers go before background ones', async () => {
    const permits = createPermits({ limitFor: () => 1 });
    const first = await permits.acquire('vies:DE');
    const { granted, permits: got } = order([
      ['background-1', permits.acquire('vies:DE', { priority: 'background' })],
      ['interactive-1', permits.acquire('vies:DE')],
      ['interactive-2', permits.acquire('vies:DE', { priority: 'interactive' })],
    ]);
    const other = await permits.acquire('vies:FR');
    assert.ok(other, 'another key has its own limit');
    await sleep(5);
    assert.deepEqual(granted, []);
    assert.deepEqual(await permits.snapshot(), [
      { key: 'vies:DE', inFlight: 1, queued: 3, limit: 1 },
      { key: 'vies:FR', inFlight: 1, queued: 0, limit: 1 },
    ]);
    first.release();
    await until(() => granted.length === 1, 'first grant');
    got.get('interactive-1')?.release();
    await until(() => granted.length === 2, 'second grant');
    got.get('interactive-2')?.release();
    await until(() => granted.length === 3, 'third grant');
    assert.deepEqual(granted, ['interactive-1', 'interactive-2', 'background-1']);
  });

  it('an aborted waiter leaves the queue and rejects with the reason', async () => {
    const permits = createPermits({ limitFor: () => 1 });
    const held = await permits.acquire('k');
    const controller = new AbortController();
    const waiting = permits.acquire('k', { signal: controller.signal });
    controller.abort(new Error('client gone'));
    await assert.rejects(waiting, /client gone/);
    held.release();
    assert.ok(await permits.acquire('k'), 'the permit is free again');
  });
});

describe('a limit that adapts to a registry that throttles', () => {
  const options = { cooldownMs: 1_000, increaseEveryMs: 10_000 };

  it('halves once per burst, never below 1, and grows back one permit per interval', () => {
    assert.equal(adaptiveLimit(8, undefined, 0, options), 8);
    let s = adaptiveThrottled(8, undefined, 0, options);
    assert.equal(adaptiveLimit(8, s, 0, options), 4);
    s = adaptiveThrottled(8, s, 999, options);
    assert.equal(adaptiveLimit(8, s, 999, options), 4, 'the same burst halves once');
    s = adaptiveThrottled(8, s, 1_000, options);
    assert.equal(adaptiveLimit(8, s, 1_000, options), 2);
    s = adaptiveThrottled(8, s, 2_000, options);
    s = adaptiveThrottled(8, s, 3_000, options);
    assert.equal(adaptiveLimit(8, s, 3_000, options), 1, 'never below one call');
    assert.equal(adaptiveLimit(8, s, 12_999, options), 1);
    assert.equal(adaptiveLimit(8, s, 13_000, options), 2);
    assert.equal(adaptiveLimit(8, s, 1_000_000, options), 8, 'never above the configured limit');
    s = adaptiveThrottled(8, s, 33_000, options);
    assert.equal(adaptiveLimit(8, s, 33_000, options), 2, 'halved from what had grown back (4)');
  });

  it('a throttled key lets fewer callers through until its cap grows back; other keys keep theirs', async () => {
    let now = 0;
    const permits = createPermits({ limitFor: () => 2, adaptive: options, now: () => now });
    permits.throttled('vies:DE');
    const first = await permits.acquire('vies:DE');
    const { granted, permits: got } = order([['second', permits.acquire('vies:DE')]]);
    const fr = [await permits.acquire('vies:FR'), await permits.acquire('vies:FR')];
    await sleep(5);
    assert.deepEqual(granted, [], 'DE is down to one call at a time');
    assert.deepEqual(
      (await permits.snapshot()).map(({ key, limit }) => [key, limit]),
      [
        ['vies:DE', 1],
        ['vies:FR', 2],
      ],
    );
    first.release();
    await until(() => granted.length === 1, 'the queued caller');
    now = 10_000;
    const third = await permits.acquire('vies:DE');
    assert.ok(third, 'the cap grew back to 2');
    got.get('second')?.release();
    third.release();
    for (const p of fr) p.release();
  });
});

/** Shared-store options of one instance of two, on a fresh prefix; Redis must not fail. */
const sharedOn = (p: string) => (redis: Redis) => ({
  redis: redis as unknown as RedisLike,
  prefix: p,
  leaseMs: 2_000,
  instances: () => 2,
  onDegraded: (error: unknown) => assert.fail(String(error)),
});

describe('permits shared through Redis', { skip }, () => {
  it('two instances never exceed the limit together, and interactive callers go first on each', async () => {
    const shared = sharedOn(prefix());
    const a = createPermits({ limitFor: () => 2, shared: shared(connect()) });
    const b = createPermits({ limitFor: () => 2, shared: shared(connect()) });
    let running = 0;
    let peak = 0;
    const task = async () => {
      running++;
      peak = Math.max(peak, running);
      await sleep(5 + Math.random() * 10);
      running--;
    };
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? a : b).run('vies:DE', task, i % 3 ? {} : { priority: 'background' }),
      ),
    );
    assert.equal(peak, 2);

    const held = [await a.acquire('vies:DE'), await b.acquire('vies:DE')];
    const { granted, permits: got } = order([
      ['background', a.acquire('vies:DE', { priority: 'background' })],
      ['interactive', a.acquire('vies:DE')],
    ]);
    await sleep(50);
    assert.deepEqual(granted, [], 'both permits are held elsewhere');
    assert.equal((await a.snapshot()).find((v) => v.key === 'vies:DE')?.inFlight, 2);
    held[1]?.release();
    await until(() => granted.length === 1, 'a grant');
    assert.deepEqual(granted, ['interactive'], 'the free permit goes to the interactive caller');
    got.get('interactive')?.release();
    await until(() => granted.length === 2, 'the background grant');
    got.get('background')?.release();
    held[0]?.release();
    a.close();
    b.close();
  });

  it('a registry throttling one instance lowers the limit on every instance', async () => {
    const shared = sharedOn(prefix());
    const a = createPermits({ limitFor: () => 4, shared: shared(connect()) });
    const b = createPermits({ limitFor: () => 4, shared: shared(connect()) });
    const held = [await b.acquire('vies:DE')];
    a.throttled('vies:DE');
    await until(
      async () => (await b.snapshot()).find((v) => v.key === 'vies:DE')?.limit === 2,
      'the lowered limit seen by the other instance',
    );
    held.push(await a.acquire('vies:DE'));
    const { granted, permits: got } = order([['third', b.acquire('vies:DE')]]);
    await sleep(100);
    assert.deepEqual(granted, [], 'two calls in flight across both instances is the lowered limit');
    held[0]?.release();
    await until(() => granted.length === 1, 'the third call once one ended');
    got.get('third')?.release();
    held[1]?.release();
    a.close();
    b.close();
  });

  it('a dead holder’s permits are freed by their lease; a live holder keeps them by renewing', async () => {
    const p = prefix();
    const dying = connect();
    const options = (redis: Redis) => ({
      limitFor: () => 1,
      shared: {
        redis: redis as unknown as RedisLike,
        prefix: p,
        leaseMs: 400,
        instances: () => 2,
        onDegraded: () => {},
      },
    });
    const a = createPermits(options(dying));
    const b = createPermits(options(connect()));
    await a.acquire('vies:DE');
    let bGot = false;
    const waiting = b.acquire('vies:DE').then((permit) => {
      bGot = true;
      return permit;
    });
    await sleep(1_300);
    assert.equal(bGot, false, 'held for three leases: renewals keep it');
    // The holder dies: no release, no more renewals.
    a.close();
    dying.disconnect();
    const permit = await waiting;
    assert.equal(bGot, true, 'freed once the lease ran out');
    permit.release();
    b.close();
  });

  it('falls back to ceil(limit / instances) per instance while Redis fails, and returns to Redis after', async () => {
    const real = connect();
    let broken = true;
    const warnings: unknown[] = [];
    const flaky: RedisLike = new Proxy(real as unknown as RedisLike, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          broken ? Promise.reject(new Error('ECONNREFUSED')) : value.apply(target, args);
      },
    });
    const p = prefix();
    const permits = createPermits({
      limitFor: () => 5,
      shared: {
        redis: flaky,
        prefix: p,
        leaseMs: 2_000,
        instances: () => 3,
        retryAfterMs: 200,
        onDegraded: (e) => warnings.push(e),
      },
    });
    const first = await permits.acquire('vies:DE');
    const second = await permits.acquire('vies:DE');
    let third: Permit | null = null;
    const pending = permits.acquire('vies:DE').then((permit) => {
      third = permit;
    });
    await sleep(50);
    assert.equal(third, null, 'ceil(5 / 3) = 2 per instance');
    assert.ok(warnings.length > 0);
    assert.equal(permits.shared(), false);
    first.release();
    await pending;
    assert.ok(third);
    broken = false;
    await sleep(300); // past retryAfterMs
    const again = await permits.acquire('vies:DE');
    assert.equal(await real.zcard(`${p}permits:vies:DE`), 1, 'counted in Redis again');
    assert.equal(permits.shared(), true);
    again.release();
    second.release();
    (third as Permit | null)?.release();
    permits.close();
  });
});
