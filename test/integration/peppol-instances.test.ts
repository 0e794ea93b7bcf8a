import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Db } from '../../src/db/database.js';
import { SML_ZONES } from '../../src/registries/peppol-sml.js';
import { createPeppolSmlSimulator, type PeppolSmlSimulator } from '../../src/simulators/peppol-sml.js';
import { createPeppolSmpSimulator } from '../../src/simulators/peppol-smp.js';
import { type SimulatorServer, serveSimulators } from '../../src/simulators/server.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { redisSkip } from '../helpers/redis.js';
import { redisPrefix } from '../helpers/resources.js';

const skip = await redisSkip();
const dnsQueries = (sml: PeppolSmlSimulator) => (sml.stats() as { queries: number }).queries;
const smpCalls = (smp: SimulatorServer) => (smp.stats().smp as { total: number }).total;

// Two instances sharing one database and one Redis: a Peppol breaker (the SML's, an SMP host's)
// opened by one holds for the other.
for (const target of await databaseTargets()) {
  describe(`Peppol breakers on two instances sharing Redis and ${target.name}`, {
    skip: skip || target.skip,
  }, () => {
    let db: TestDb;
    let smp: SimulatorServer;
    let sml: PeppolSmlSimulator;
    let apps: TestApp[];
    let key: TestKey;

    before(async () => {
      db = await target.open();
      smp = serveSimulators({ smp: createPeppolSmpSimulator() });
      const { base } = await smp.listen(0);
      sml = createPeppolSmlSimulator({ smpBase: `${base}/peppol-smp` });
      const dns = await sml.listen(0, '127.0.0.1');
      const shared: Db = { ...db, close: async () => {} };
      const env = {
        PEPPOL_SML_ZONE: SML_ZONES.peppolProduction,
        PEPPOL_DNS_SERVERS: `127.0.0.1:${dns.port}`,
        PEPPOL_DNS_TIMEOUT_MS: '300',
        PEPPOL_SMP_TIMEOUT_MS: '3000',
        PEPPOL_ALLOW_PRIVATE_SMP: 'true',
        REDIS_URL: process.env.TEST_REDIS_URL as string,
        OPENVAT_REDIS_PREFIX: redisPrefix(`peppol${target.name}`),
        OPENVAT_STATUS_POLL_MS: '0',
        OPENVAT_BREAKER_THRESHOLD: '2',
        OPENVAT_BREAKER_OPEN_MS: '60000',
        OPENVAT_RATE_LIMIT_PRO: '100000',
      };
      apps = [await buildTestApp(env, { db: shared }), await buildTestApp(env, { db: shared })];
      key = await (apps[0] as TestApp).key('pro', 'live');
    });
    after(async () => {
      for (const app of apps) await app.close();
      await db.dispose();
      await sml.close();
      await smp.close();
    });

    const lookup = (instance: number, identifier: string) =>
      (apps[instance] as TestApp).app.inject({
        method: 'GET',
        url: `/v1/peppol/${encodeURIComponent(identifier)}?cache=false`,
        headers: key.headers,
      });

    it('an SMP host’s breaker opened on one instance holds on the other', async () => {
      smp.control({ smp: { down: ['invoices'] } });
      for (let i = 0; i < 2; i++) {
        const body = (await lookup(0, '9930:de999000009')).json();
        assert.equal(body.data.participants[0].smp_status, 'unavailable');
      }
      const calls = smpCalls(smp);
      const other = (await lookup(1, '9930:de999000009')).json();
      assert.equal(other.data.participants[0].smp_status, 'unavailable');
      assert.equal(smpCalls(smp), calls, 'the other instance sends the SMP nothing');
      smp.control({ smp: { reset: true } });
    });

    it('the SML breaker opened on one instance holds on the other, and shows in its status', async () => {
      for (let i = 0; i < 2; i++) assert.equal((await lookup(0, '9914:atu99990019')).statusCode, 502);
      const queries = dnsQueries(sml);
      const refused = await lookup(1, '9910:hu99900009');
      assert.equal(refused.statusCode, 502, refused.body);
      assert.match(refused.json().error.message, /circuit open/);
      assert.equal(dnsQueries(sml), queries, 'no DNS query from the other instance');
      const status = (await (apps[1] as TestApp).app.inject({ method: 'GET', url: '/v1/status' })).json();
      assert.equal(status.data.peppol.sml_breaker, 'open');
    });
  });
}
