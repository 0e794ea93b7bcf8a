import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { redisSkip } from '../helpers/redis.js';
import { redisPrefix } from '../helpers/resources.js';

const skip = await redisSkip();

// Two instances sharing one database and one Redis: an EORI service's breaker opened by one holds
// for the other, and concurrent checks of one number share one call to the service.
for (const target of await databaseTargets()) {
  describe(`EORI checks on two instances sharing Redis and ${target.name}`, {
    skip: skip || target.skip,
  }, () => {
    let db: TestDb;
    let sim: SimulatorServer;
    let apps: TestApp[];
    let key: TestKey;

    before(async () => {
      db = await target.open();
      sim = createSimulatorServer();
      const { urls } = await sim.listen(0, '127.0.0.1');
      const shared: Db = { ...db, close: async () => {} };
      const env = {
        EOS_URL: urls.EOS_URL,
        HMRC_URL: urls.HMRC_URL,
        REDIS_URL: process.env.TEST_REDIS_URL as string,
        OPENVAT_REDIS_PREFIX: redisPrefix(`eori${target.name}`),
        OPENVAT_STATUS_POLL_MS: '0',
        OPENVAT_REGISTRY_BACKOFF_MS: '1',
        OPENVAT_REGISTRY_DEADLINE_MS: '20',
        OPENVAT_REGISTRY_TIMEOUT_MS: '2000',
        OPENVAT_BREAKER_THRESHOLD: '2',
        OPENVAT_BREAKER_OPEN_MS: '60000',
      };
      apps = [await buildTestApp(env, { db: shared }), await buildTestApp(env, { db: shared })];
      key = await (apps[0] as TestApp).key('free', 'live');
    });
    after(async () => {
      for (const app of apps) await app.close();
      await sim.close();
      await db.dispose();
    });

    const get = (instance: number, number: string, query = '') =>
      (apps[instance] as TestApp).app.inject({
        method: 'GET',
        url: `/v1/eori/${number}${query}`,
        headers: key.headers,
      });
    const received = () => (sim.stats() as { eos: { eorisReceived: string[] } }).eos.eorisReceived;

    it('concurrent checks of one number on both instances share one call', async () => {
      sim.control({ eos: { latencyMs: 400 } });
      const answers = await Promise.all([get(0, 'DE100'), get(1, 'DE100'), get(0, 'DE100'), get(1, 'DE100')]);
      for (const answer of answers) assert.equal(answer.statusCode, 200, answer.body);
      assert.equal(received().filter((n) => n === 'DE100').length, 1, 'one call for four checks');
      sim.control({ eos: { latencyMs: 0 } });
    });

    it('a breaker opened by one instance holds for the other: no call is made, 502', async () => {
      for (let i = 0; i < 2; i++) {
        const failed = await get(0, 'DE303', '?cache=false'); // the service's HTML maintenance page
        assert.equal(failed.statusCode, 502, failed.body);
      }
      const before = received().length;
      const other = await get(1, 'DE101', '?cache=false');
      assert.equal(other.statusCode, 502, other.body);
      assert.equal(other.json().error.code, 'registry_unavailable');
      assert.ok(other.headers['retry-after'], 'Retry-After is sent');
      assert.equal(received().length, before, 'the other instance asked nothing while the breaker is open');
    });
  });
}
