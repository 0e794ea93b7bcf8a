import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { Db } from '../../src/db/database.js';
import { createManualClock } from '../../src/lib/clock.js';
import { createRedisWindowLimiter, type RedisCounter } from '../../src/lib/window-limiter.js';
import { PLAYGROUND_KEY } from '../../src/modules/playground/playground.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { redisSkip } from '../helpers/redis.js';
import { redisPrefix } from '../helpers/resources.js';

const skip = await redisSkip();
/** Addresses of this run only, so runs never share a count. */
const address = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

describe('window limits counted in Redis', { skip }, () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(process.env.TEST_REDIS_URL as string);
  });
  after(() => redis.disconnect());

  it('two instances share one budget per key, and the count expires with its window', async () => {
    const clock = createManualClock('2026-11-22T12:59:30.000Z');
    const prefix = redisPrefix('limits');
    const options = { redis, prefix, max: 3, windowMs: 60_000, clock };
    const a = createRedisWindowLimiter(options);
    const b = createRedisWindowLimiter(options);
    assert.deepEqual([await a.take('ip-1'), await b.take('ip-1'), await a.take('ip-1')], [0, 0, 0]);
    assert.equal(await b.take('ip-1'), 30, 'the fourth, on either instance, waits for the next minute');
    assert.equal(await a.take('ip-2'), 0, 'another key has its own budget');
    const keys = await redis.keys(`${prefix}*`);
    assert.equal(keys.length, 2);
    const ttl = await redis.pttl(keys[0] as string);
    assert.ok(ttl > 0 && ttl <= 60_000, 'the count expires');
    clock.set('2026-11-22T13:00:00.000Z');
    assert.equal(await b.take('ip-1'), 0, 'a new window, a new budget');
  });

  it('counts in this process when Redis fails, so the limit still holds per instance', async () => {
    const clock = createManualClock('2026-11-22T12:00:00.000Z');
    const errors: unknown[] = [];
    const broken: RedisCounter = {
      multi() {
        const pipeline = {
          incr: () => pipeline,
          pexpire: () => pipeline,
          exec: () => Promise.reject(new Error('connection refused')),
        };
        return pipeline;
      },
    };
    const limiter = createRedisWindowLimiter({
      redis: broken,
      prefix: 'x:',
      max: 2,
      windowMs: 60_000,
      clock,
      onError: (error) => errors.push(error),
    });
    assert.deepEqual([await limiter.take('k'), await limiter.take('k')], [0, 0]);
    assert.equal(await limiter.take('k'), 60);
    assert.equal(errors.length, 3);
  });
});

for (const target of await databaseTargets()) {
  describe(`two instances sharing Redis, on ${target.name}`, { skip: skip || target.skip }, () => {
    let db: TestDb;
    let a: TestApp;
    let b: TestApp;
    before(async () => {
      db = await target.open();
      const shared: Db = { ...db, close: async () => {} };
      const env = {
        REDIS_URL: process.env.TEST_REDIS_URL as string,
        OPENVAT_REDIS_PREFIX: redisPrefix(target.name),
        OPENVAT_RATE_LIMIT_PRO: '3',
      };
      a = await buildTestApp(env, { db: shared });
      b = await buildTestApp(env, { db: shared });
    });
    after(async () => {
      await a.close();
      await b.close();
      await db.dispose();
    });

    const validate = (app: TestApp, headers: Record<string, string>, remoteAddress = '127.0.0.1') =>
      app.app.inject({ method: 'GET', url: '/v1/validate?vat_number=DE100000008', headers, remoteAddress });

    it("a key's per-minute limit holds across instances", async () => {
      const key = await a.key('pro');
      const statuses = [];
      for (const app of [a, b, a, b]) statuses.push((await validate(app, key.headers)).statusCode);
      assert.deepEqual(statuses, [200, 200, 200, 429]);
    });

    it("the playground's 30 requests an hour per address hold across instances", async () => {
      const ip = address();
      const demo = { authorization: `Bearer ${PLAYGROUND_KEY}` };
      for (let i = 0; i < 30; i++) {
        const res = await validate(i % 2 === 0 ? a : b, demo, ip);
        assert.equal(res.statusCode, 200, `request ${i + 1}`);
      }
      assert.equal((await validate(a, demo, ip)).statusCode, 429);
      const rates = await b.app.inject({
        method: 'GET',
        url: '/v1/rates/de',
        headers: demo,
        remoteAddress: ip,
      });
      assert.equal(rates.statusCode, 429, 'rates made with the demo key share the budget');
      assert.equal((await validate(b, demo, address())).statusCode, 200, 'another address has its own');
    });
  });
}
