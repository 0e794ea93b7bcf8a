import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { RouteEntry } from '../../src/app.js';
import { createManualClock } from '../../src/lib/clock.js';
import { createTestModeEvatrClient } from '../../src/modules/confirmations/test-evatr.js';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { createFakeDns } from '../fakes/webhook-dns.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { snapshot } from '../helpers/db-snapshot.js';
import { hostileString, type JsonSchema, mutated, valid } from '../helpers/schema-arbitrary.js';

/**
 * Property-based fuzzing of the whole API, generated from the app's route table (so routes added
 * later are fuzzed without changes here): requests built from each route's schemas, valid and
 * mutated — wrong types, extra and missing fields, huge values, unicode and lone surrogates, NUL
 * bytes, deep nesting, broken percent-encoding, other content types, bad keys. For every request:
 * never a 5xx, every error in the envelope with the request id, and nothing stored when refused.
 *
 * FUZZ_RUNS requests per database (default 1500: a few thousand in all on SQLite and PostgreSQL in
 * CI); `npm run fuzz` runs 20,000 per database. FUZZ_SEED replays a failing run.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 1500);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

const clock = createManualClock('2026-11-22T10:00:00.000Z');

/** Live registries that answer at once: valid, invalid or unavailable depending on the number. */
const registry = {
  source: 'vies' as const,
  countries: [],
  lookup: async (request: { vat: { national: string } }) => {
    const last = request.vat.national.slice(-1);
    if (last === '7') {
      return {
        kind: 'unavailable' as const,
        source: 'vies' as const,
        reason: 'down' as const,
        retryable: true,
        message: 'The member state service is unavailable.',
      };
    }
    return {
      kind: 'answer' as const,
      source: 'vies' as const,
      valid: last !== '3',
      name: 'Beispiel GmbH',
      address: 'Hauptstrasse 1',
      consultationNumber: null,
      checkedAt: clock.now(),
    };
  },
};

/** Percent-encodes any string as UTF-8 (lone surrogates become U+FFFD, as a client would send them). */
function encode(value: string): string {
  return [...Buffer.from(value, 'utf8')]
    .map((byte) => {
      const c = String.fromCharCode(byte);
      return /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
}

/** Path segments as sent on the wire, including encodings no decoder accepts. */
const rawSegment = fc.oneof(
  fc.constantFrom('%ED%A0%80', '%', '%0', '%zz', '%00', '..', '.', '%2F', '%C0%AF', '%FF%FE'),
  fc.integer({ min: 100, max: 3_000 }).map((n) => 'x'.repeat(n)),
);

function paramValue(schema: JsonSchema | undefined): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: valid(schema).map((v) => encode(String(v))) },
    { weight: 2, arbitrary: hostileString().map(encode) },
    { weight: 1, arbitrary: rawSegment },
  );
}

function pathFor(route: RouteEntry): fc.Arbitrary<string> {
  const params = (route.schema.params as JsonSchema | undefined)?.properties ?? {};
  const parts = route.url.split('/').map((segment) => {
    if (segment.startsWith(':')) return paramValue(params[segment.slice(1)]);
    if (segment === '*') return fc.oneof(fc.string({ maxLength: 20 }).map(encode), rawSegment);
    return fc.constant(segment);
  });
  return fc.tuple(...parts).map((segments) => segments.join('/'));
}

function queryFor(route: RouteEntry): fc.Arbitrary<string> {
  const schema = route.schema.querystring as JsonSchema | undefined;
  const pairs = (value: unknown) =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.entries(value).map(
          ([k, v]) => `${encode(k)}=${encode(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))}`,
        )
      : [`q=${encode(JSON.stringify(value) ?? '')}`];
  return fc
    .oneof(
      { weight: 3, arbitrary: valid(schema).map(pairs) },
      { weight: 2, arbitrary: mutated(schema).map(pairs) },
      {
        weight: 1,
        arbitrary: fc.array(
          rawSegment.map((s) => `${s}=${s}`),
          { maxLength: 3 },
        ),
      },
    )
    .map((list) => (list.length ? `?${list.join('&')}` : ''));
}

interface Body {
  payload?: string | Buffer;
  contentType?: string;
}

function bodyFor(route: RouteEntry): fc.Arbitrary<Body> {
  const schema = route.schema.body as JsonSchema | undefined;
  const json = (value: unknown): Body => ({
    payload: JSON.stringify(value) ?? 'null',
    contentType: 'application/json',
  });
  return fc.oneof(
    { weight: schema ? 4 : 1, arbitrary: valid(schema).map(json) },
    { weight: 4, arbitrary: mutated(schema).map(json) },
    { weight: 1, arbitrary: fc.constant<Body>({}) },
    {
      weight: 1,
      arbitrary: fc.record({
        payload: fc.oneof(
          fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
          fc.constantFrom('{', '{"a":', '[]', '""', '{"vat_numbers":[', '\u0000', 'null'),
          // Nesting far deeper than any generated value: as raw text, which no serializer has to build.
          fc.integer({ min: 1_000, max: 30_000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
          fc.integer({ min: 1_000, max: 10_000 }).map((n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`),
        ),
        contentType: fc.constantFrom(
          'application/json',
          'application/json; charset=latin1',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/xml',
        ),
      }),
    },
  );
}

for (const target of await databaseTargets()) {
  describe(`fuzzing every route (${target.name})`, { skip: target.skip }, () => {
    let db: TestDb;
    let t: TestApp;
    let sim: SimulatorServer;
    let routes: RouteEntry[];
    const authorizations: string[] = [];

    before(async () => {
      db = await target.open();
      // The EORI services and the national registers a live key may reach: the simulators, never the
      // real services (whose absence would be a 502 for a well-formed number).
      sim = createSimulatorServer({ now: () => clock.now() });
      const urls = (await sim.listen(0)).urls;
      t = await buildTestApp(
        {
          EOS_URL: urls.EOS_URL,
          HMRC_URL: urls.HMRC_URL,
          OPENVAT_NATIONAL_FALLBACKS: 'none',
          OPENVAT_CONFIRM_BURST: '100000',
          OPENVAT_RATE_LIMIT_BUSINESS: '100000000',
          OPENVAT_RATE_LIMIT_FREE: '100000000',
          OPENVAT_PUBLIC_RATE_LIMIT: '100000000',
          OPENVAT_PLAYGROUND: 'false',
          OPENVAT_BODY_LIMIT: '65536',
          OPENVAT_REGISTRY_DEADLINE_MS: '0',
        },
        {
          db,
          clock,
          dns: createFakeDns({ 'hooks.example.com': '93.184.216.34' }),
          registries: { clientForPrefix: () => registry, viesStatus: { checkStatus: async () => null } },
          evatr: createTestModeEvatrClient({ clock }),
        },
      );
      const test = await t.key('business', 'test', { defaultRequesterVat: 'DE136695976' });
      const live = await t.key('business', 'live', { defaultRequesterVat: 'DE136695976' });
      const free = await t.key('free', 'test');
      const revoked = await t.key('business', 'test');
      await t.container.keys.revokeKey(revoked.id);
      authorizations.push(
        test.headers.authorization,
        live.headers.authorization,
        free.headers.authorization,
        revoked.headers.authorization,
        'Bearer svc_test_notakey',
        'Basic dXNlcjpwYXNz',
        'Bearer',
        '',
      );
      routes = [...t.app.routeTable];
      assert.ok(routes.length > 10, 'the route table lists the routes');
    });
    after(async () => {
      await t?.close();
      await db?.dispose();
      await sim?.close();
    });

    it('answers the counterexamples earlier runs found', async () => {
      // GET /v1/audits/%00 was a 500 on PostgreSQL (a NUL byte in a text parameter).
      for (const url of [
        '/v1/audits/%00',
        '/v1/confirmations/%00',
        '/v1/validate/batch/%00',
        '/v1/webhooks/%00',
      ]) {
        const res = await t.app.inject({
          method: 'GET',
          url,
          headers: { authorization: authorizations[0] as string },
        });
        assert.equal(res.statusCode, 404, `${url}: ${res.body}`);
      }
    });

    it(`answers ${RUNS} generated requests without a 5xx, always in the envelope, storing nothing when refusing`, async () => {
      // Routes are named, not embedded, so a counterexample prints short.
      const byName = new Map(routes.map((route) => [`${route.method} ${route.url}`, route]));
      const request = fc.constantFrom(...byName.keys()).chain((name) => {
        const route = byName.get(name) as RouteEntry;
        return fc.record({
          route: fc.constant(name),
          path: pathFor(route),
          query: queryFor(route),
          body: route.method === 'GET' || route.method === 'DELETE' ? fc.constant<Body>({}) : bodyFor(route),
          authorization: fc.oneof(
            { weight: 6, arbitrary: fc.constantFrom(...authorizations.slice(0, 2)) },
            { weight: 2, arbitrary: fc.constantFrom(...authorizations.slice(2)) },
            {
              weight: 1,
              arbitrary: fc.string({ maxLength: 60, unit: fc.constantFrom(...'abcXYZ019 _-.=+/') }),
            },
          ),
          idempotencyKey: fc.option(
            fc.oneof(fc.uuid(), fc.string({ maxLength: 80, unit: fc.constantFrom(...'ab01-_ :') })),
          ),
        });
      });

      const statuses = new Map<string, number>();
      let before = await snapshot(db);
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const route = byName.get(r.route) as RouteEntry;
          const headers: Record<string, string> = {};
          if (r.authorization) headers.authorization = r.authorization;
          if (r.body.contentType) headers['content-type'] = r.body.contentType;
          if (r.idempotencyKey !== null) headers['idempotency-key'] = r.idempotencyKey;
          const res = await t.app.inject({
            method: route.method as 'GET',
            url: `${r.path}${r.query}`,
            headers,
            ...(r.body.payload !== undefined ? { payload: r.body.payload } : {}),
          });
          const status = `${res.statusCode}`;
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          const where = `${route.method} ${r.path.slice(0, 120)}${r.query.slice(0, 120)} → ${res.statusCode}`;
          assert.ok(res.statusCode < 500, `${where} ${res.body.slice(0, 300)}`);
          if (res.statusCode >= 400) {
            let body: { error?: { code?: unknown; message?: unknown }; meta?: { request_id?: unknown } };
            try {
              body = JSON.parse(res.body);
            } catch {
              assert.fail(`${where}: not JSON: ${res.body.slice(0, 200)}`);
            }
            assert.equal(typeof body.error?.code, 'string', `${where}: ${res.body.slice(0, 300)}`);
            assert.equal(typeof body.error?.message, 'string', where);
            assert.equal(body.meta?.request_id, res.headers['service-request-id'], where);
            const after = await snapshot(db);
            assert.deepEqual(after, before, `${where}: a refused request changed stored data`);
          } else {
            before = await snapshot(db);
          }
        }),
        { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}), endOnFailure: true },
      );
      // How the answers spread (a generator that only produced 400s would test little).
      console.log(`# ${target.name} statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
      const accepted = [...statuses].filter(([s]) => s.startsWith('2')).reduce((n, [, c]) => n + c, 0);
      assert.ok(accepted >= RUNS / 20, `only ${accepted} of ${RUNS} generated requests were accepted`);
    });
  });
}
