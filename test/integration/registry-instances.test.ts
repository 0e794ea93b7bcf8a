import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { Db } from '../../src/db/database.js';
import { germanVatNumberWithCheckDigit } from '../../src/simulators/evatr.js';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { expectedViesAnswer } from '../../src/simulators/vies.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { redisSkip } from '../helpers/redis.js';
import { redisPrefix } from '../helpers/resources.js';

const skip = await redisSkip();

interface ViesStats {
  total: number;
  calls: Record<string, number>;
  rejections: Record<string, number>;
  errors: Record<string, number>;
  maxConcurrencySeen: Record<string, number>;
}
const viesStats = (sim: SimulatorServer) => (sim.stats() as { vies: ViesStats }).vies;

/** Well-formed German numbers from `offset`, with what the simulator answers for them. */
function germanNumbers(count: number, offset: number): Array<{ vat: string; valid: boolean }> {
  const out: Array<{ vat: string; valid: boolean }> = [];
  for (let i = offset; out.length < count; i++) {
    const vat = germanVatNumberWithCheckDigit(String(40_000_000 + i));
    const expected = expectedViesAnswer('DE', vat.slice(2));
    if ('valid' in expected) out.push({ vat, valid: expected.valid });
  }
  return out;
}

for (const target of await databaseTargets()) {
  describe(`three instances sharing Redis and ${target.name}`, { skip: skip || target.skip }, () => {
    let db: TestDb;
    let sim: SimulatorServer;
    let apps: TestApp[];
    let keys: TestKey[];
    let redis: Redis;
    const prefix = redisPrefix(target.name);

    before(async () => {
      db = await target.open();
      sim = createSimulatorServer({ latencyMs: 10 });
      const { urls } = await sim.listen(0, '127.0.0.1');
      const shared: Db = { ...db, close: async () => {} };
      const env = {
        ...urls,
        REDIS_URL: process.env.TEST_REDIS_URL as string,
        OPENVAT_REDIS_PREFIX: prefix,
        OPENVAT_REGISTRY_CONCURRENCY: '2',
        OPENVAT_REGISTRY_DEADLINE_MS: '2000',
        // Hundreds of validations of one member state at once wait their turn for its two calls.
        OPENVAT_REGISTRY_PERMIT_WAIT_MS: '60000',
        OPENVAT_REGISTRY_BACKOFF_MS: '5',
        OPENVAT_BREAKER_THRESHOLD: '3',
        OPENVAT_BREAKER_OPEN_MS: '60000',
        OPENVAT_RATE_LIMIT_PRO: '1000000',
      };
      apps = [];
      for (let i = 0; i < 3; i++) apps.push(await buildTestApp(env, { db: shared }));
      const key = await apps[0]!.key('pro', 'live');
      keys = [key, key, key];
      redis = new Redis(process.env.TEST_REDIS_URL as string);
    });
    after(async () => {
      for (const app of apps) await app.close();
      await sim.close();
      await db.dispose();
      redis.disconnect();
    });

    const validate = (i: number, vat: string, query = '') =>
      apps[i % 3]!.app.inject({
        method: 'GET',
        url: `/v1/validate?vat_number=${vat}${query}`,
        headers: keys[i % 3]!.headers,
      });

    it('600 concurrent cache-miss validations over 3 instances keep 2 calls in flight per member state', async () => {
      sim.control({ vies: { reset: true, latencyMs: 10, concurrencyLimit: { '*': 2 } } });
      const numbers = germanNumbers(600, 0);
      const answers = await Promise.all(numbers.map((n, i) => validate(i, n.vat)));
      const stats = viesStats(sim);
      assert.deepEqual(
        answers.filter((a) => a.statusCode !== 200).map((a) => a.body),
        [],
        'every validation answered',
      );
      const wrong = answers.filter((a, i) => a.json().data.valid !== numbers[i]!.valid);
      assert.equal(wrong.length, 0, 'no false valid: false (or true)');
      assert.equal(stats.errors.MS_MAX_CONCURRENT_REQ ?? 0, 0, 'the simulator refused nothing');
      assert.deepEqual(stats.rejections, {});
      assert.ok(
        (stats.maxConcurrencySeen.DE ?? 0) <= 2,
        `at most 2 in flight, saw ${stats.maxConcurrencySeen.DE}`,
      );
      assert.equal(stats.maxConcurrencySeen.DE, 2, 'and the limit was used');
      assert.equal(stats.calls.DE, 600, 'one upstream call per number');
      assert.equal(await redis.zcard(`${prefix}permits:vies:DE`), 0, 'every permit was returned');
    });

    it('a batch job spread over the instances draws from the same permits', async () => {
      sim.control({ vies: { reset: true, latencyMs: 10, concurrencyLimit: { '*': 2 } } });
      const numbers = germanNumbers(120, 5_000);
      const created = await apps[0]!.app.inject({
        method: 'POST',
        url: '/v1/validate/batch',
        headers: keys[0]!.headers,
        payload: { vat_numbers: numbers.map((n) => n.vat), async: true },
      });
      assert.equal(created.statusCode, 202, created.body);
      const id = created.json().data.id as string;
      await Promise.all(apps.map((a) => a.container.batchWorker.drain()));
      const job = await apps[1]!.app.inject({
        method: 'GET',
        url: `/v1/validate/batch/${id}`,
        headers: keys[1]!.headers,
      });
      assert.equal(job.json().data.status, 'completed', job.body);
      const stats = viesStats(sim);
      assert.deepEqual(stats.rejections, {});
      assert.ok(
        (stats.maxConcurrencySeen.DE ?? 0) <= 2,
        `at most 2 in flight, saw ${stats.maxConcurrencySeen.DE}`,
      );
    });

    it('concurrent requests for one number on different instances make one upstream call', async () => {
      sim.control({ vies: { reset: true, latencyMs: 150 } });
      const [n] = germanNumbers(1, 9_000);
      const answers = await Promise.all([0, 1, 2, 0, 1, 2].map((i) => validate(i, n!.vat, '&cache=false')));
      assert.ok(answers.every((a) => a.statusCode === 200 && a.json().data.valid === n!.valid));
      assert.equal(viesStats(sim).total, 1);
    });

    it('an outage seen by one instance opens the breaker on the others', async () => {
      sim.control({ vies: { reset: true, down: ['AT'] } });
      for (let i = 0; i < 3; i++) {
        const res = await apps[0]!.app.inject({
          method: 'GET',
          url: '/v1/validate?vat_number=ATU13585627&cache=false',
          headers: keys[0]!.headers,
        });
        assert.equal(res.statusCode, 502);
      }
      const calls = viesStats(sim).calls.AT;
      for (const i of [1, 2]) {
        const res = await validate(i, 'ATU13585627', '&cache=false');
        assert.equal(res.statusCode, 502);
        assert.match(res.json().error.message, /circuit open/);
      }
      assert.equal(viesStats(sim).calls.AT, calls, 'the other instances did not call');
      const status = await apps[2]!.app.inject({ method: 'GET', url: '/v1/status' });
      assert.equal(status.statusCode, 200);
      const at = status.json().data.registries.find((r: { country: string }) => r.country === 'AT');
      assert.equal(at.breaker, 'open');
      assert.ok(at.retry_after_seconds > 0);
      assert.equal(status.json().data.shared, true);
    });
  });
}

describe('the VIES status poll with several instances sharing Redis', { skip }, () => {
  it('runs on one instance per round, and the circuits it opens are open on every instance', async () => {
    const db = (await databaseTargets())[0]!;
    const opened = await db.open();
    const shared: Db = { ...opened, close: async () => {} };
    let polls = 0;
    const registries = {
      clientForPrefix: () => null,
      viesStatus: {
        async checkStatus() {
          polls += 1;
          return { AT: { available: false, upstream: 'Unavailable' } };
        },
      },
    };
    const env = {
      REDIS_URL: process.env.TEST_REDIS_URL as string,
      OPENVAT_REDIS_PREFIX: redisPrefix('poll'),
      OPENVAT_STATUS_POLL_MS: '600000',
    };
    const apps = [
      await buildTestApp(env, { db: shared, registries }),
      await buildTestApp(env, { db: shared, registries }),
      await buildTestApp(env, { db: shared, registries }),
    ];
    try {
      for (const app of apps) app.container.start();
      const deadline = Date.now() + 5_000;
      while (polls === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(polls, 1, 'one poll for the round, not one per instance');
      for (const app of apps) {
        const gate = await app.container.liveAnswers.breaker.check('vies:AT');
        assert.equal(gate.allowed, false, 'AT is open on every instance');
      }
    } finally {
      for (const app of apps) await app.close();
      await opened.dispose();
    }
  });
});
