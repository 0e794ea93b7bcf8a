import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type Container, createContainer } from '../../src/container.js';
import { createManualClock } from '../../src/lib/clock.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

/** A well-formed key of `kind` that no one has created: `n` picks which. */
const madeUp = (kind: 'test' | 'admin', n: number) => `svc_${kind}_${String(n).padStart(32, 'Q')}`;
const METRICS_TOKEN = randomBytes(32).toString('hex');

// Sixty failed authentications a minute from one address (the default limit) are an attacker's, or
// one client's behind the proxy every operator shares. Beyond them the address's credentials that are
// not valid are answered 429; a valid API key, admin key or metrics token is still accepted from it.
for (const target of await databaseTargets()) {
  describe(`failed authentications never lock out a valid credential (${target.name})`, {
    skip: target.skip,
  }, () => {
    let db: TestDb;
    let app: FastifyInstance;
    let container: Container;
    // One second into a minute: the failures below all fall in it.
    const clock = createManualClock('2026-11-29T09:00:01.000Z');

    before(async () => {
      db = await target.open();
      const config = loadConfig({
        DATABASE_URL: 'sqlite::memory:',
        LOG_LEVEL: 'silent',
        OPENVAT_METRICS_TOKEN: METRICS_TOKEN,
      });
      container = await createContainer(config, { db, clock, redis: null });
      app = await buildApp(container);
    });
    after(async () => {
      await app.close();
      await container.close();
    });

    const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
    const validate = (key: string, remoteAddress: string) =>
      app.inject({
        method: 'GET',
        url: '/v1/validate?vat_number=DE100000008',
        headers: bearer(key),
        remoteAddress,
      });
    const me = (key: string, remoteAddress: string) =>
      app.inject({ method: 'GET', url: '/admin/v1/me', headers: bearer(key), remoteAddress });
    const metrics = (token: string, remoteAddress: string) =>
      app.inject({ method: 'GET', url: '/metrics', headers: bearer(token), remoteAddress });

    it('an address past sixty bad keys still gets in with a valid API key or admin key it never used', async () => {
      const proxy = '10.9.0.1';
      for (let n = 0; n < 60; n++) {
        const refused = await (n % 2 === 0
          ? validate(madeUp('test', n), proxy)
          : me(madeUp('admin', n), proxy));
        assert.equal(refused.statusCode, 401, `failure ${n + 1} is within the limit`);
      }
      const limited = await validate(madeUp('test', 60), proxy);
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.json().error.code, 'rate_limited');
      assert.match(limited.json().error.message, /Too many failed authentications from this address/);
      assert.equal(limited.headers['retry-after'], '59', 'until the minute ends');
      assert.equal((await me(madeUp('admin', 61), proxy)).statusCode, 429, 'on /admin too');
      assert.equal((await validate('svc_test_short', proxy)).statusCode, 429, 'a malformed key too');

      // Keys this instance has not seen yet: created, never presented.
      const apiKey = await container.keys.createKey({ plan: 'pro', mode: 'test' });
      const adminKey = await container.admin.createKey('on-call', 'admin');
      const accepted = await validate(apiKey.key, proxy);
      assert.equal(accepted.statusCode, 200, accepted.body);
      const signedIn = await me(adminKey.key, proxy);
      assert.equal(signedIn.statusCode, 200, signedIn.body);
      assert.equal(signedIn.json().data.name, 'on-call');

      // The limit still holds for what is not valid, a revoked key included.
      await container.keys.revokeKey(apiKey.id);
      assert.equal((await validate(apiKey.key, proxy)).statusCode, 429);
      assert.equal((await validate(madeUp('test', 62), proxy)).statusCode, 429);
      // Other addresses are not affected.
      assert.equal((await validate(madeUp('test', 63), '10.9.0.99')).statusCode, 401);
      // The next minute the address starts again.
      clock.advance(59_000);
      assert.equal((await validate(madeUp('test', 64), proxy)).statusCode, 401);
    });

    it('wrong /metrics tokens count as failed authentications; the right one is served from that address', async () => {
      clock.set(new Date('2026-11-29T09:10:01.000Z'));
      const scraper = '10.9.0.2';
      assert.equal(
        (await app.inject({ method: 'GET', url: '/metrics', remoteAddress: scraper })).statusCode,
        401,
      );
      for (let n = 0; n < 60; n++) {
        assert.equal((await metrics(`wrong-${n}`, scraper)).statusCode, 401, `failure ${n + 1}`);
      }
      const limited = await metrics('wrong-60', scraper);
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.json().error.code, 'rate_limited');
      assert.equal(limited.headers['retry-after'], '59');
      const scraped = await metrics(METRICS_TOKEN, scraper);
      assert.equal(scraped.statusCode, 200);
      assert.match(scraped.body, /^# HELP /m);
      // Failures on /metrics and on the API keys count together: the address is limited on /v1 too.
      assert.equal((await validate(madeUp('test', 70), scraper)).statusCode, 429);
    });
  });
}
