import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import type { RouteEntry } from '../../src/app.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type Container, createContainer } from '../../src/container.js';
import { START_ACTOR } from '../../src/modules/admin/service.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { snapshot } from '../helpers/db-snapshot.js';
import { redisSkip } from '../helpers/redis.js';
import { redisPrefix } from '../helpers/resources.js';

// Probed before any suite starts (a busy event loop could make a probe time out).
const redisSkipReason = await redisSkip();
const targets = await databaseTargets();

/** A body each admin write accepts, so a refusal is about the caller, not the input. */
function bodyFor(route: RouteEntry, accountId: string): object | undefined {
  if (route.method === 'GET') return undefined;
  if (route.url === '/admin/v1/accounts') return { name: 'Matrix' };
  if (route.url === '/admin/v1/keys') return { account_id: accountId, plan: 'pro', mode: 'test' };
  if (route.url.endsWith('/roll')) return { overlap_seconds: 60 };
  if (route.url.endsWith('/revoke') || route.url.startsWith('/admin/v1/rates/')) return undefined;
  return { metadata: { seen: 'yes' } };
}

// The admin routes' authorization matrix, generated from the app's route table: every admin route
// and method called with no key, an API key, a revoked admin key, a `read` admin key and an `admin`
// key. Refused calls change nothing stored.
describe('admin authorization matrix', () => {
  let t: TestApp;
  const keys: Record<string, { authorization: string } | null> = {};
  let accountId = '';
  let keyId = '';
  /** A held rate change for each decision route (each is decided once, by the admin key). */
  const heldChanges: Record<string, string> = {};

  before(async () => {
    t = await buildTestApp({ OPENVAT_AUTH_FAILURES_PER_MINUTE: '100000' });
    const api = await t.key('business');
    accountId = api.accountId;
    keyId = api.id;
    const admin = await t.container.admin.createKey('ops', 'admin');
    const read = await t.container.admin.createKey('viewer', 'read');
    const revoked = await t.container.admin.createKey('gone', 'admin');
    await t.container.admin.revokeKey(revoked.summary.id, START_ACTOR);
    keys.none = null;
    keys.api = api.headers;
    keys.revoked = { authorization: `Bearer ${revoked.key}` };
    keys.read = { authorization: `Bearer ${read.key}` };
    keys.admin = { authorization: `Bearer ${admin.key}` };
    for (const decision of ['accept', 'reject']) {
      const id = t.container.ids.uuid();
      await t.container.db.kysely
        .insertInto('rate_changes')
        .values({
          id,
          country_code: 'de',
          valid_from: '2027-01-01',
          rates: JSON.stringify({
            standard_rate: 26,
            reduced_rates: [7],
            super_reduced_rate: null,
            parking_rate: null,
          }),
          source: 'tedb',
          learnt_at: '2026-11-27T10:00:00.000Z',
          status: 'held',
          reason: 'the matrix',
          decided_at: null,
          decided_by: null,
        })
        .execute();
      heldChanges[decision] = id;
    }
  });
  after(() => t.close());

  const pathOf = (route: RouteEntry) =>
    route.url.replace(
      ':id',
      route.url.startsWith('/admin/v1/accounts')
        ? accountId
        : route.url.startsWith('/admin/v1/rates/changes/')
          ? (heldChanges[route.url.split('/').at(-1) as string] as string)
          : keyId,
    );

  it('every admin route is in the table with its role', () => {
    const routes = t.app.routeTable.filter((r) => r.url.startsWith('/admin/v1/'));
    assert.ok(routes.length >= 12, `found ${routes.length}`);
    for (const route of routes) assert.notEqual(route.adminRole, null, `${route.method} ${route.url}`);
  });

  it('refuses callers without the role, storing nothing, and serves those with it', async () => {
    // The revocation last: the roll needs the key active.
    const routes = t.app.routeTable
      .filter((r) => r.adminRole !== null)
      .sort((x, y) => Number(x.url.endsWith('/revoke')) - Number(y.url.endsWith('/revoke')));
    for (const route of routes) {
      const name = `${route.method} ${route.url}`;
      for (const caller of ['none', 'api', 'revoked', 'read', 'admin'] as const) {
        const allowed = caller === 'admin' || (caller === 'read' && route.adminRole === 'read');
        const before = allowed ? null : await snapshot(t.container.db);
        const payload = bodyFor(route, accountId);
        const response = await t.app.inject({
          method: route.method as 'GET',
          url: pathOf(route),
          headers: keys[caller] ?? {},
          ...(payload ? { payload } : {}),
        });
        if (allowed) {
          assert.ok(
            response.statusCode < 300,
            `${name} as ${caller}: ${response.statusCode} ${response.body}`,
          );
          continue;
        }
        const expected = caller === 'read' ? 403 : 401;
        assert.equal(response.statusCode, expected, `${name} as ${caller}: ${response.body}`);
        assert.equal(response.json().error.code, caller === 'read' ? 'scope_not_allowed' : 'unauthorized');
        assert.deepEqual(await snapshot(t.container.db), before, `${name} as ${caller} changed nothing`);
      }
    }
  });
});

describe('the admin API on a listener of its own', () => {
  it('the public app answers 404 under /admin; the admin app serves it and no /v1', async () => {
    const config = loadConfig({
      DATABASE_URL: 'sqlite::memory:',
      LOG_LEVEL: 'silent',
      OPENVAT_ADMIN_PORT: '0',
    });
    const container = await createContainer(config, { redis: null });
    const publicApp = await buildApp(container);
    const adminApp = await buildApp(container, { surface: 'admin' });
    try {
      const admin = await container.admin.createKey('ops', 'admin');
      const headers = { authorization: `Bearer ${admin.key}` };
      assert.equal(
        (await publicApp.inject({ method: 'GET', url: '/admin/v1/accounts', headers })).statusCode,
        404,
      );
      assert.equal(
        (await adminApp.inject({ method: 'GET', url: '/admin/v1/accounts', headers })).statusCode,
        200,
      );
      assert.equal((await adminApp.inject({ method: 'GET', url: '/v1/rates' })).statusCode, 404);
    } finally {
      await publicApp.close();
      await adminApp.close();
      await container.close();
    }
  });
});

// Two instances on one database and one Redis: a change made on one is honoured by the other
// within a second, long before OPENVAT_KEY_CACHE_MS (set to a minute here).
for (const target of targets) {
  describe(`key changes reach every instance through Redis (${target.name})`, {
    skip: target.skip || redisSkipReason,
  }, () => {
    let db: TestDb;
    const instances: Array<{ app: FastifyInstance; container: Container }> = [];
    const prefix = redisPrefix(`admin${target.name}`);

    before(async () => {
      db = await target.open();
    });
    after(async () => {
      for (const { app, container } of instances) {
        await app.close();
        await container.close();
      }
      const redis = new Redis(process.env.TEST_REDIS_URL as string);
      const names = await redis.keys(`${prefix}*`);
      if (names.length > 0) await redis.del(...names);
      redis.disconnect();
      await db.dispose();
    });

    async function instance() {
      const config = loadConfig({
        DATABASE_URL: 'sqlite::memory:',
        LOG_LEVEL: 'silent',
        OPENVAT_KEY_CACHE_MS: '60000',
        OPENVAT_REDIS_PREFIX: prefix,
      });
      const container = await createContainer(config, {
        db: { ...db, close: async () => {} },
        redis: new Redis(process.env.TEST_REDIS_URL as string),
      });
      const app = await buildApp(container);
      instances.push({ app, container });
      return { app, container };
    }

    /** Asks until `status` comes back, for at most 1 s. */
    async function within1s(app: FastifyInstance, key: string, status: number): Promise<number> {
      const deadline = Date.now() + 1_000;
      let last = 0;
      while (Date.now() < deadline) {
        last = (
          await app.inject({
            method: 'GET',
            url: '/v1/validate?vat_number=DE100000008',
            headers: { authorization: `Bearer ${key}` },
            remoteAddress: '10.9.0.1',
          })
        ).statusCode;
        if (last === status) return last;
        await sleep(20);
      }
      return last;
    }

    it('a revocation, a scope change and a disabled account on one instance apply on the other within 1 s', async () => {
      const a = await instance();
      const b = await instance();
      const admin = await a.container.admin.createKey('ops', 'admin');
      const headers = { authorization: `Bearer ${admin.key}` };
      const account = (
        await a.app.inject({
          method: 'POST',
          url: '/admin/v1/accounts',
          headers,
          payload: { name: 'Pub/sub' },
        })
      ).json().data;
      const create = async () =>
        (
          await a.app.inject({
            method: 'POST',
            url: '/admin/v1/keys',
            headers,
            payload: { account_id: account.id, plan: 'pro', mode: 'test' },
          })
        ).json().data;
      const revoked = await create();
      const scoped = await create();
      for (const k of [revoked, scoped]) assert.equal(await within1s(b.app, k.key, 200), 200);

      await a.app.inject({ method: 'POST', url: `/admin/v1/keys/${revoked.id}/revoke`, headers });
      assert.equal(await within1s(b.app, revoked.key, 401), 401);

      await a.app.inject({
        method: 'PATCH',
        url: `/admin/v1/keys/${scoped.id}`,
        headers,
        payload: { scopes: ['decide'] },
      });
      assert.equal(await within1s(b.app, scoped.key, 403), 403);

      await a.app.inject({
        method: 'PATCH',
        url: `/admin/v1/keys/${scoped.id}`,
        headers,
        payload: { scopes: null },
      });
      assert.equal(await within1s(b.app, scoped.key, 200), 200);
      await a.app.inject({
        method: 'PATCH',
        url: `/admin/v1/accounts/${account.id}`,
        headers,
        payload: { disabled: true },
      });
      assert.equal(await within1s(b.app, scoped.key, 401), 401);
    });
  });
}
