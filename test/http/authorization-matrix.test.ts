import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { RouteEntry } from '../../src/app.js';
import { createManualClock } from '../../src/lib/clock.js';
import { createTestModeEvatrClient } from '../../src/modules/confirmations/test-evatr.js';
import { PLANS, type Plan, planIncludes } from '../../src/modules/keys/plans.js';
import { createFakeDns } from '../fakes/webhook-dns.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { snapshot } from '../helpers/db-snapshot.js';
import { type JsonSchema, valid } from '../helpers/schema-arbitrary.js';

/**
 * The authorization matrix, generated from the app's route table: every authenticated route and
 * method is called by keys that must not act on the owner's data — a key of another account, a key of
 * the owner's account in the other mode, a revoked key and a key of a plan without the operation —
 * and each must be refused with the right status while nothing stored changes (every table's rows
 * are hashed before and after); the lists, counts and summaries they read hold nothing of the
 * owner's. Routes added later are covered without changes here: their path parameters get the
 * owner's ids where the path names a known resource, a fresh UUID otherwise.
 */

const clock = createManualClock('2026-11-22T10:00:00.000Z');

/** The company name the registry answers with (changed once, so the owner's monitor has a change). */
let registryName = 'Beispiel GmbH';

/** A live registry that answers every number valid (the owner works in live mode). */
const registry = {
  source: 'vies' as const,
  countries: [],
  lookup: async (request: { requester?: unknown }) => ({
    kind: 'answer' as const,
    source: 'vies' as const,
    valid: true,
    name: registryName,
    address: 'Hauptstrasse 1, Wien',
    consultationNumber: request.requester ? 'WAPIAAAAZ1A2B3C4' : null,
    checkedAt: clock.now(),
  }),
};

interface Owned {
  endpointId: string;
  deliveryId: string;
  auditId: string;
  jobId: string;
  confirmationId: string;
  monitorId: string;
}

/** The owner's id for a path parameter, from the path segment it follows; a fresh id otherwise. */
function paramValue(url: string, name: string, owned: Owned): string {
  const segments = url.split('/');
  const before = segments[segments.indexOf(`:${name}`) - 1];
  switch (before) {
    case 'webhooks':
      return owned.endpointId;
    case 'deliveries':
      return owned.deliveryId;
    case 'audits':
      return owned.auditId;
    case 'batch':
      return owned.jobId;
    case 'confirmations':
      return owned.confirmationId;
    case 'monitors':
      return owned.monitorId;
    default:
      return '0196f000-0000-7000-8000-000000000000';
  }
}

function pathFor(route: RouteEntry, owned: Owned): string {
  return route.url.replace(/:([A-Za-z_]+)/g, (_m, name: string) => paramValue(route.url, name, owned));
}

/** A body the route's schema accepts (generated with a fixed seed), so the refusal is not a 400. */
function sampleBody(route: RouteEntry): unknown {
  const schema = route.schema.body as JsonSchema | undefined;
  if (!schema) return undefined;
  return fc.sample(valid(schema), { numRuns: 1, seed: 42 })[0];
}

/** A query string with the route's required query parameters, for the same reason. */
function sampleQuery(route: RouteEntry): string {
  const schema = route.schema.querystring as JsonSchema | undefined;
  if (!schema?.required?.length) return '';
  const value = fc.sample(valid(schema), { numRuns: 1, seed: 42 })[0] as Record<string, unknown>;
  return `?${new URLSearchParams(Object.entries(value).map(([k, v]): [string, string] => [k, String(v)])).toString()}`;
}

const env = { OPENVAT_CONFIRM_BURST: '1000', OPENVAT_PLAYGROUND: 'false' };

/** The app's ports on a database: the fixed clock, the live registry above, a fake DNS and eVatR. */
function portsOn(db: TestDb) {
  return {
    db,
    clock,
    dns: createFakeDns({ 'hooks.example.com': '93.184.216.34' }),
    registries: { clientForPrefix: () => registry, viesStatus: { checkStatus: async () => null } },
    evatr: createTestModeEvatrClient({ clock }),
  };
}

for (const target of await databaseTargets()) {
  describe(`authorization matrix (${target.name})`, { skip: target.skip }, () => {
    let db: TestDb;
    let t: TestApp;
    let owner: TestKey;
    let owned: Owned;
    const intruders: Record<string, TestKey> = {};
    const lowPlan: Partial<Record<Plan, TestKey>> = {};
    let routes: RouteEntry[];

    before(async () => {
      registryName = 'Beispiel GmbH';
      db = await target.open();
      t = await buildTestApp(env, portsOn(db));
      owner = await t.key('business', 'live', { defaultRequesterVat: 'DE136695976' });
      const { accountId } = owner;
      const call = async (method: string, url: string, payload?: object) => {
        const res = await t.app.inject({
          method: method as 'GET',
          url,
          headers: owner.headers,
          ...(payload ? { payload } : {}),
        });
        assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
        return res.json() as { data: Record<string, string>; id?: string; meta: { request_id: string } };
      };
      const endpoint = await call('POST', '/v1/webhooks', { url: 'https://hooks.example.com/hook' });
      // A live validation with a consultation number (so its audit record has a proof): an audit
      // record, an event and an undelivered delivery to the endpoint.
      const validation = await call(
        'GET',
        '/v1/validate?vat_number=ATU14243102&requester_vat_number=DE136695976',
      );
      const deliveries = await call('GET', `/v1/webhooks/${endpoint.id}/deliveries`);
      const job = await call('POST', '/v1/validate/batch', { vat_numbers: ['ATU14243102'], async: true });
      const confirmation = await call('POST', '/v1/confirm', {
        vat_number: 'ATU12345678',
        company: { name: 'Beispiel GmbH', street: 'Hauptstrasse 1', postcode: '1010', town: 'Wien' },
      });
      const monitor = await call('POST', '/v1/monitors', {
        vat_number: 'ATU14243102',
        interval: 'daily',
        reference: 'owner-reference',
      });
      const monitorId = (monitor.data as unknown as { monitor: { id: string } }).monitor.id;
      // The registry now answers another name: the owner's monitor records a change.
      registryName = 'Beispiel Holding GmbH';
      const check = await call('POST', `/v1/monitors/${monitorId}/check`);
      assert.equal((check.data as unknown as { changes: unknown[] }).changes.length, 1);
      const firstDelivery = (deliveries.data as unknown as Array<{ id: string }>)[0];
      assert.ok(firstDelivery, 'the validation queued a delivery');
      owned = {
        endpointId: endpoint.id as string,
        deliveryId: firstDelivery.id,
        auditId: validation.meta.request_id,
        jobId: job.data.id as string,
        confirmationId: confirmation.data.confirmation_id as string,
        monitorId,
      };

      intruders['another account'] = await t.key('business', 'live');
      intruders['a test key of the same account'] = await t.key('business', 'test', { accountId });
      intruders['a revoked key of the same account'] = await t.key('business', 'live', { accountId });
      await t.container.keys.revokeKey(intruders['a revoked key of the same account'].id);
      for (const plan of PLANS) lowPlan[plan] = await t.key(plan, 'live', { accountId });

      routes = t.app.routeTable.filter((route) => route.operation !== null);
    });
    after(async () => {
      await t?.close();
      await db?.dispose();
    });

    it('covers every authenticated route the app registered', () => {
      const names = routes.map((r) => `${r.method} ${r.url}`);
      for (const known of [
        'DELETE /v1/webhooks/:id',
        'PATCH /v1/webhooks/:id',
        'GET /v1/audits/:request_id',
        'POST /v1/confirm',
      ]) {
        assert.ok(names.includes(known), `${known} is in the route table`);
      }
    });

    async function attempt(route: RouteEntry, key: TestKey, app: TestApp = t) {
      const body = sampleBody(route);
      return app.app.inject({
        method: route.method as 'GET',
        url: `${pathFor(route, owned)}${sampleQuery(route)}`,
        headers: { ...key.headers, 'idempotency-key': `matrix-${key.id}` },
        ...(body !== undefined ? { payload: body as object } : {}),
      });
    }

    function assertEnvelope(res: { statusCode: number; json(): unknown; headers: Record<string, unknown> }) {
      const body = res.json() as {
        error?: { code?: unknown; message?: unknown };
        meta?: { request_id?: unknown };
      };
      assert.equal(typeof body.error?.code, 'string');
      assert.equal(typeof body.error?.message, 'string');
      assert.equal(body.meta?.request_id, res.headers['service-request-id']);
    }

    it("keys of another account or mode get 404 on the owner's resources, and nothing changes", async () => {
      // A Peppol look-up's or an EORI check's path names what is looked up, not a resource of an account.
      const resources = routes.filter(
        (r) => r.url.includes(':') && r.url !== '/v1/peppol/:identifier' && r.url !== '/v1/eori/:number',
      );
      assert.ok(resources.length > 5);
      for (const route of resources) {
        for (const who of ['another account', 'a test key of the same account']) {
          const key = intruders[who] as TestKey;
          const before = await snapshot(db);
          const res = await attempt(route, key);
          assert.equal(
            res.statusCode,
            404,
            `${who}: ${route.method} ${route.url} → ${res.statusCode} ${res.body}`,
          );
          assertEnvelope(res);
          assert.deepEqual(
            await snapshot(db),
            before,
            `${who}: ${route.method} ${route.url} changed stored data`,
          );
        }
      }
    });

    it("keys of another account or mode list, count and summarise none of the owner's rows", async () => {
      // What a key of its mode reads on a server that holds nothing else, making the same calls: fresh
      // intruders must read exactly that here, beside the owner's rows.
      const emptyDb = await target.open();
      const empty = await buildTestApp(env, portsOn(emptyDb));
      /** The answer's status and `data`, with the key's own id replaced (usage names it). */
      const read = async (route: RouteEntry, key: TestKey, app: TestApp) => {
        const res = await attempt(route, key, app);
        const { data } = res.json() as { data?: unknown };
        return { status: res.statusCode, data: JSON.stringify(data ?? null).replaceAll(key.id, '<key>') };
      };
      try {
        const lists = routes.filter((r) => r.method === 'GET' && !r.url.includes(':'));
        const intrudersOf = {
          'another account': { key: await t.key('business', 'live'), mode: 'live' },
          'a test key of the same account': {
            key: await t.key('business', 'test', { accountId: owner.accountId }),
            mode: 'test',
          },
        } as const;
        for (const [who, { key, mode }] of Object.entries(intrudersOf)) {
          const alone = await empty.key('business', mode);
          for (const route of lists) {
            assert.deepEqual(
              await read(route, key, t),
              await read(route, alone, empty),
              `${who}: ${route.method} ${route.url}`,
            );
          }
        }
        // The owner's answers do describe its rows, so the comparison above has something to miss.
        const alone = await empty.key('business', 'live');
        for (const url of [
          '/v1/webhooks',
          '/v1/monitors',
          '/v1/monitors/changes',
          '/v1/monitors/summary',
          '/v1/usage',
        ]) {
          const route = lists.find((r) => r.url === url) as RouteEntry;
          assert.ok(route, `${url} is in the route table`);
          assert.notDeepEqual(await read(route, owner, t), await read(route, alone, empty), url);
        }
      } finally {
        await empty.close();
        await emptyDb.dispose();
      }
    });

    it('a revoked key gets 401 on every authenticated route, and nothing changes', async () => {
      const key = intruders['a revoked key of the same account'] as TestKey;
      for (const route of routes) {
        const before = await snapshot(db);
        const res = await attempt(route, key);
        assert.equal(res.statusCode, 401, `${route.method} ${route.url} → ${res.statusCode} ${res.body}`);
        assertEnvelope(res);
        assert.deepEqual(await snapshot(db), before, `${route.method} ${route.url} changed stored data`);
      }
    });

    it('a key of a plan without the operation gets 402 on every route of it, and nothing changes', async () => {
      let checked = 0;
      for (const route of routes) {
        const operation = route.operation as NonNullable<RouteEntry['operation']>;
        for (const plan of PLANS.filter((p) => !planIncludes(p, operation))) {
          const before = await snapshot(db);
          const res = await attempt(route, lowPlan[plan] as TestKey);
          assert.equal(
            res.statusCode,
            402,
            `${plan}: ${route.method} ${route.url} → ${res.statusCode} ${res.body}`,
          );
          assertEnvelope(res);
          assert.deepEqual(
            await snapshot(db),
            before,
            `${plan}: ${route.method} ${route.url} changed stored data`,
          );
          checked++;
        }
      }
      assert.ok(checked > 0);
    });

    it("the owner's ids are real: the owner reads every resource the intruders were refused", async () => {
      for (const route of routes.filter((r) => r.url.includes(':') && r.method === 'GET')) {
        if (
          route.url
            .split('/')
            .some(
              (s, i, all) =>
                s.startsWith(':') &&
                !['webhooks', 'deliveries', 'audits', 'batch', 'confirmations', 'monitors'].includes(
                  all[i - 1] ?? '',
                ),
            )
        )
          continue;
        const res = await attempt(route, owner);
        assert.equal(res.statusCode, 200, `${route.method} ${route.url} → ${res.statusCode} ${res.body}`);
      }
    });
  });
}
