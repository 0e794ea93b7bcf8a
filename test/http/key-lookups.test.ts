import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { type KyselyPlugin, SelectQueryNode } from 'kysely';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type Container, createContainer } from '../../src/container.js';
import { createManualClock } from '../../src/lib/clock.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { redisSkip } from '../helpers/redis.js';
import { redisPrefix } from '../helpers/resources.js';

// Probed before any suite starts (a busy event loop could make the probe time out).
const redisSkipReason = await redisSkip();

/** Counts the reads of `api_keys` made through the database it is given to. */
function keyReadCounter() {
  const counter = { reads: 0 };
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      if (SelectQueryNode.is(args.node) && JSON.stringify(args.node.from).includes('"api_keys"')) {
        counter.reads++;
      }
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return { counter, plugin };
}

/** A well-formed test key that no one has created (yet): `n` picks which. */
const madeUp = (n: number) => `svc_test_${String(n).padStart(32, 'Z')}`;

// Instances of the service on one database, their reads of `api_keys` counted, on a manual clock
// that starts on a minute.
for (const target of await databaseTargets()) {
  describe(`keys that are not valid cost one read and count against the address (${target.name})`, {
    skip: target.skip,
  }, () => {
    let db: TestDb;
    const clock = createManualClock('2026-11-23T10:00:00.000Z');
    const instances: Array<{ app: FastifyInstance; container: Container }> = [];
    const { counter, plugin } = keyReadCounter();
    let nextSecret: string | null = null;

    async function instance(env: Record<string, string> = {}) {
      const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', ...env });
      const container = await createContainer(config, {
        // The database outlives the instances: each closes only itself.
        db: { ...db, kysely: db.kysely.withPlugin(plugin), close: async () => {} },
        clock,
        redis: null,
        keySecrets: () => {
          const secret = nextSecret ?? 'a'.repeat(32);
          nextSecret = null;
          return secret;
        },
      });
      const app = await buildApp(container);
      instances.push({ app, container });
      return { app, container };
    }

    before(async () => {
      db = await target.open();
    });
    after(async () => {
      for (const { app, container } of instances) {
        await app.close();
        await container.close();
      }
      await db.dispose();
    });

    const validate = (app: FastifyInstance, key: string, remoteAddress = '10.0.0.1') =>
      app.inject({
        method: 'GET',
        url: '/v1/validate?vat_number=DE100000008',
        headers: { authorization: `Bearer ${key}` },
        remoteAddress,
      });

    it('an unknown key presented again and again is read once per OPENVAT_KEY_CACHE_MS', async () => {
      const a = await instance();
      const before = counter.reads;
      for (let round = 0; round < 5; round++) {
        for (const n of [1, 2, 3]) {
          const response = await validate(a.app, madeUp(n), `10.1.0.${n}`);
          assert.equal(response.statusCode, 401);
          assert.equal(response.json().error.code, 'unauthorized');
        }
      }
      assert.equal(counter.reads - before, 3, 'one read per distinct key');
      // Concurrent requests with one key that is not known yet share one read.
      const together = await Promise.all(
        Array.from({ length: 10 }, () => validate(a.app, madeUp(4), '10.1.0.4')),
      );
      assert.deepEqual(new Set(together.map((r) => r.statusCode)), new Set([401]));
      assert.equal(counter.reads - before, 4);
      // Once the window has passed, each is read again (once).
      clock.advance(5_001);
      for (const n of [1, 2, 3, 1, 2, 3]) assert.equal((await validate(a.app, madeUp(n))).statusCode, 401);
      assert.equal(counter.reads - before, 7);
      clock.advance(60_000);
    });

    it('an address past its failed authentications is answered 429 with Retry-After for keys that are not valid; others are not', async () => {
      const a = await instance({ OPENVAT_AUTH_FAILURES_PER_MINUTE: '5' });
      const real = await a.container.keys.createKey({ plan: 'pro', mode: 'test' });
      const minuteStart = Math.ceil(clock.millis() / 60_000) * 60_000;
      clock.set(new Date(minuteStart + 15_000));
      for (let n = 10; n < 15; n++) {
        assert.equal((await validate(a.app, madeUp(n), '10.2.0.1')).statusCode, 401);
      }
      const limited = await validate(a.app, madeUp(15), '10.2.0.1');
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.json().error.code, 'rate_limited');
      assert.match(limited.json().error.message, /failed authentications from this address/);
      assert.equal(limited.headers['retry-after'], '45', 'until the minute ends');
      // A key known to be refused and a malformed key: 429, unread; a well-formed key that is not
      // known costs its one read (it might be another client's behind the same proxy), then 429.
      const readsBefore = counter.reads;
      assert.equal((await validate(a.app, madeUp(10), '10.2.0.1')).statusCode, 429);
      assert.equal((await validate(a.app, 'svc_test_short', '10.2.0.1')).statusCode, 429);
      assert.equal(counter.reads, readsBefore, 'a refusal known here costs no read');
      assert.equal((await validate(a.app, madeUp(16), '10.2.0.1')).statusCode, 429);
      assert.equal(counter.reads, readsBefore + 1);

      // A real key is accepted from the limited address, never seen before…
      assert.equal((await validate(a.app, real.key, '10.2.0.1')).statusCode, 200);
      // …and from another address.
      assert.equal((await validate(a.app, real.key, '10.2.0.2')).statusCode, 200);
      // The next minute the address may try again.
      clock.advance(45_000);
      assert.equal((await validate(a.app, madeUp(17), '10.2.0.1')).statusCode, 401);
      clock.advance(60_000);
    });

    it('a key created after it was refused works at once where it was created, and elsewhere within the window', async () => {
      const a = await instance();
      const b = await instance();
      const secret = 'b'.repeat(32);
      const key = `svc_test_${secret}`;
      assert.equal((await validate(a.app, key)).statusCode, 401);
      assert.equal((await validate(b.app, key)).statusCode, 401);
      nextSecret = secret;
      const created = await a.container.keys.createKey({ plan: 'pro', mode: 'test' });
      assert.equal(created.key, key);
      assert.equal((await validate(a.app, key)).statusCode, 200, 'at once on the creating instance');
      clock.advance(4_000);
      assert.equal((await validate(b.app, key)).statusCode, 401, 'still refused from the cache elsewhere');
      clock.advance(1_001);
      assert.equal((await validate(b.app, key)).statusCode, 200, 'and accepted after the window');
      clock.advance(60_000);
    });
  });
}

describe('failed authentications counted across instances in Redis', { skip: redisSkipReason }, () => {
  const clock = createManualClock('2026-11-23T11:00:10.000Z');
  const instances: Array<{ app: FastifyInstance; container: Container }> = [];
  let redis: Redis;
  const prefix = redisPrefix('lookups');

  before(() => {
    redis = new Redis(process.env.TEST_REDIS_URL as string);
  });
  after(async () => {
    for (const { app, container } of instances) {
      await app.close();
      await container.close();
    }
    const names = await redis.keys(`${prefix}*`);
    if (names.length > 0) await redis.del(...names);
    redis.disconnect();
  });

  async function instance() {
    const config = loadConfig({
      DATABASE_URL: 'sqlite::memory:',
      LOG_LEVEL: 'silent',
      OPENVAT_AUTH_FAILURES_PER_MINUTE: '4',
      OPENVAT_REDIS_PREFIX: prefix,
    });
    const container = await createContainer(config, {
      clock,
      redis: new Redis(process.env.TEST_REDIS_URL as string),
    });
    const app = await buildApp(container);
    instances.push({ app, container });
    return app;
  }

  it('failures on one instance count on the other', async () => {
    const a = await instance();
    const b = await instance();
    const validate = (app: FastifyInstance, n: number) =>
      app.inject({
        method: 'GET',
        url: '/v1/validate?vat_number=DE100000008',
        headers: { authorization: `Bearer ${madeUp(n)}` },
        remoteAddress: '10.3.0.1',
      });
    for (const n of [1, 2]) assert.equal((await validate(a, n)).statusCode, 401);
    for (const n of [3, 4]) assert.equal((await validate(b, n)).statusCode, 401);
    const limited = await validate(a, 5);
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.headers['retry-after'], '50');
    assert.equal((await validate(b, 6)).statusCode, 429);
  });
});
