import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type Container, createContainer } from '../../src/container.js';
import { createManualClock } from '../../src/lib/clock.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

// Two instances of the service on one database, each with its own key cache, on a manual clock.
for (const target of await databaseTargets()) {
  describe(`key look-ups reused for OPENVAT_KEY_CACHE_MS (${target.name})`, { skip: target.skip }, () => {
    let db: TestDb;
    const clock = createManualClock('2026-11-23T10:00:00.000Z');
    const instances: Array<{ app: FastifyInstance; container: Container }> = [];

    async function instance(env: Record<string, string> = {}) {
      const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', ...env });
      // The database outlives the instances: each closes only itself.
      const container = await createContainer(config, { db: { ...db, close: async () => {} }, clock });
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

    const validate = (app: FastifyInstance, key: string) =>
      app.inject({
        method: 'GET',
        url: '/v1/validate?vat_number=DE100000008',
        headers: { authorization: `Bearer ${key}` },
      });

    it('a key revoked on one instance is refused there at once, and by another within the window', async () => {
      const a = await instance();
      const b = await instance();
      const created = await a.container.keys.createKey({ plan: 'pro', mode: 'test' });
      assert.equal((await validate(a.app, created.key)).statusCode, 200);
      assert.equal((await validate(b.app, created.key)).statusCode, 200);

      assert.equal((await a.container.keys.revokeKey(created.id)).kind, 'ok');
      const refused = await validate(a.app, created.key);
      assert.equal(refused.statusCode, 401, 'the revoking instance refuses the key at once');
      assert.equal(refused.json().error.code, 'unauthorized');

      // The other instance still has the key from its look-up before the revocation…
      clock.advance(4_000);
      assert.equal((await validate(b.app, created.key)).statusCode, 200);
      // …for at most OPENVAT_KEY_CACHE_MS (default 5 s) after that look-up.
      clock.advance(1_001);
      assert.equal((await validate(b.app, created.key)).statusCode, 401);
      clock.advance(60_000);
      assert.equal((await validate(a.app, created.key)).statusCode, 401);
    });

    it('revoking one key leaves the cached keys of others in place', async () => {
      const a = await instance();
      const kept = await a.container.keys.createKey({ plan: 'pro', mode: 'test' });
      const revoked = await a.container.keys.createKey({ plan: 'pro', mode: 'test' });
      assert.equal((await validate(a.app, kept.key)).statusCode, 200);
      assert.equal((await validate(a.app, revoked.key)).statusCode, 200);
      assert.equal((await a.container.keys.revokeKey(revoked.id)).kind, 'ok');
      assert.equal((await validate(a.app, revoked.key)).statusCode, 401);
      assert.equal((await validate(a.app, kept.key)).statusCode, 200);
    });

    it('with OPENVAT_KEY_CACHE_MS=0 every request reads its key: a revocation elsewhere applies at once', async () => {
      const a = await instance();
      const b = await instance({ OPENVAT_KEY_CACHE_MS: '0' });
      const created = await a.container.keys.createKey({ plan: 'pro', mode: 'test' });
      assert.equal((await validate(b.app, created.key)).statusCode, 200);
      assert.equal((await a.container.keys.revokeKey(created.id)).kind, 'ok');
      assert.equal((await validate(b.app, created.key)).statusCode, 401);
    });

    it('a longer window is honoured as configured', async () => {
      const a = await instance();
      const b = await instance({ OPENVAT_KEY_CACHE_MS: '30000' });
      const created = await a.container.keys.createKey({ plan: 'pro', mode: 'test' });
      assert.equal((await validate(b.app, created.key)).statusCode, 200);
      assert.equal((await a.container.keys.revokeKey(created.id)).kind, 'ok');
      clock.advance(29_000);
      assert.equal((await validate(b.app, created.key)).statusCode, 200);
      clock.advance(1_001);
      assert.equal((await validate(b.app, created.key)).statusCode, 401);
    });
  });
}
