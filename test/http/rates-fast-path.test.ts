import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { createManualClock } from '../../src/lib/clock.js';
import { ratesFastPath } from '../../src/modules/rates/routes.js';
import { buildTestApp, isUuidV7, type TestApp } from '../helpers/app.js';

interface Raw {
  status: number;
  /** Header names and values in the order they were sent. */
  headers: Array<[string, string]>;
  body: string;
}

/** One request over a real socket, with the path sent as given and the headers kept as received. */
function get(base: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const pairs: Array<[string, string]> = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          pairs.push([(res.rawHeaders[i] as string).toLowerCase(), res.rawHeaders[i + 1] as string]);
        }
        resolve({
          status: res.statusCode ?? 0,
          headers: pairs,
          body: Buffer.concat(chunks).toString('utf8'),
        });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * A response with its per-request parts blanked, to compare two answers: the id, the latency, the
 * date, and the length, which varies with the latency's digits (checked against the body separately).
 */
function normalised(raw: Raw) {
  const body = JSON.parse(raw.body);
  assert.ok(isUuidV7(body.meta.request_id));
  assert.equal(typeof body.meta.latency_ms, 'number');
  const id = raw.headers.find(([name]) => name === 'service-request-id')?.[1];
  assert.equal(id, body.meta.request_id, 'the header and the body carry the same request id');
  const alias = raw.headers.find(([name]) => name === 'x-request-id')?.[1];
  assert.equal(alias, id, 'X-Request-Id carries it too');
  body.meta.request_id = 'ID';
  body.meta.latency_ms = 0;
  return {
    status: raw.status,
    headers: raw.headers.map(([name, value]) =>
      name === 'service-request-id' || name === 'x-request-id' || name === 'date' || name === 'content-length'
        ? [name, '…']
        : [name, value],
    ),
    body,
  };
}

async function listening(env: Record<string, string>, ports = {}) {
  const t = await buildTestApp(env, ports);
  let routed = 0;
  t.app.addHook('onRequest', (_request, _reply, done) => {
    routed++;
    done();
  });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = t.app.server.address() as AddressInfo;
  return { t, base: `http://127.0.0.1:${port}`, routed: () => routed };
}

describe('rates fast path over a real socket', () => {
  let t: TestApp;
  let base: string;
  let routed: () => number;
  before(async () => {
    ({ t, base, routed } = await listening({ OPENVAT_PUBLIC_RATE_LIMIT: '1000' }));
  });
  after(() => t.close());

  it("answers today's rates of a country without the router, with the route's exact headers and body", async () => {
    const before = routed();
    const fast = await get(base, '/v1/rates/de');
    assert.equal(routed(), before, 'not routed');
    // If-None-Match that does not match: the route answers the same 200.
    const routedAnswer = await get(base, '/v1/rates/de', { 'if-none-match': '"something-else"' });
    assert.equal(routed(), before + 1, 'routed');
    assert.equal(fast.status, 200);
    const a = normalised(fast);
    const b = normalised(routedAnswer);
    assert.deepEqual(a, b, 'same headers in the same order, same body');
    const length = fast.headers.find(([name]) => name === 'content-length')?.[1];
    assert.equal(Number(length), Buffer.byteLength(fast.body));
    assert.equal(a.body.data.country_code, 'de');
  });

  it('answers a code in any case as the route does', async () => {
    const before = routed();
    const upper = normalised(await get(base, '/v1/rates/DE'));
    assert.equal(routed(), before);
    const lower = normalised(await get(base, '/v1/rates/de'));
    assert.deepEqual(upper.body, lower.body);
  });

  it('leaves every other request to the route', async () => {
    const cases: Array<{ path: string; status: number; method?: string; headers?: Record<string, string> }> =
      [
        { path: '/v1/rates/de?date=2020-08-01', status: 200 },
        { path: '/v1/rates/de?', status: 200 },
        { path: '/v1/rates/zz', status: 404 },
        { path: '/v1/rates/d1', status: 400 },
        { path: '/v1/rates/de/', status: 404 },
        { path: '/v1/rates/de', status: 200, method: 'HEAD' },
        { path: '/v1/rates/de', status: 304, headers: { 'if-none-match': '*' } },
        { path: '/v1/rates', status: 200 },
        // A key may bring its own budget (the playground's demo key does).
        { path: '/v1/rates/de', status: 200, headers: { authorization: 'Bearer svc_test_anything' } },
      ];
    for (const c of cases) {
      const before = routed();
      const res = await get(base, c.path, c.headers, c.method);
      assert.equal(res.status, c.status, `${c.method ?? 'GET'} ${c.path}`);
      assert.equal(routed(), before + 1, `${c.method ?? 'GET'} ${c.path} is routed`);
    }
    const dated = JSON.parse((await get(base, '/v1/rates/de?date=2020-08-01')).body);
    assert.equal(dated.data.standard_rate, 16);
  });
});

describe('rates fast path and the per-IP limit', () => {
  it('counts against the same budget as the route, which answers 429 once it is used', async () => {
    const { t, base, routed } = await listening({ OPENVAT_PUBLIC_RATE_LIMIT: '3' });
    try {
      assert.equal(
        (await get(base, '/v1/rates/zz')).status,
        404,
        'an unknown country is counted once, by the route',
      );
      assert.equal((await get(base, '/v1/rates/de')).status, 200);
      assert.equal((await get(base, '/v1/rates/fr')).status, 200);
      assert.equal(routed(), 1);
      const limited = await get(base, '/v1/rates/de');
      assert.equal(routed(), 2, 'over the limit, the route answers');
      assert.equal(limited.status, 429);
      assert.equal(JSON.parse(limited.body).error.code, 'rate_limited');
      const retryAfter = Number(limited.headers.find(([n]) => n === 'retry-after')?.[1]);
      assert.ok(retryAfter > 0 && retryAfter <= 60);
      assert.equal((await get(base, '/v1/rates')).status, 429, 'the list shares the budget');
    } finally {
      await t.close();
    }
  });
});

describe('rates fast path and request logging', () => {
  it('is off when requests are logged, so every request is logged', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const { t, base, routed } = await listening({}, { log });
    try {
      const res = await get(base, '/v1/rates/de');
      assert.equal(res.status, 200);
      assert.equal(routed(), 1);
      const id = res.headers.find(([n]) => n === 'service-request-id')?.[1];
      assert.ok(lines.some((l) => l.msg === 'request completed' && l.reqId === id));
    } finally {
      await t.close();
    }
  });
});

describe('ratesFastPath', () => {
  async function setUp(closing: boolean, limit = 2) {
    const t = await buildTestApp({ OPENVAT_PUBLIC_RATE_LIMIT: String(limit) });
    const path = ratesFastPath({
      rates: t.container.rates,
      limiter: t.container.publicLimiter,
      ids: t.container.ids,
      closing: () => closing,
      clientAddress: (request) => request.socket.remoteAddress ?? '',
    });
    const written: Array<{ status: number; headers: Record<string, unknown>; body: string }> = [];
    const response = {
      writeHead(status: number, headers: Record<string, unknown>) {
        written.push({ status, headers, body: '' });
        return this;
      },
      end(body: string) {
        (written.at(-1) as { body: string }).body = body;
        return this;
      },
    } as unknown as ServerResponse;
    const answer = (url: string, remoteAddress = '192.0.2.1') =>
      path(
        { method: 'GET', url, headers: {}, socket: { remoteAddress } } as unknown as IncomingMessage,
        response,
      );
    return { t, answer, written };
  }

  it('stays out of the way while the server shuts down', async () => {
    const { t, answer, written } = await setUp(true);
    try {
      assert.equal(answer('/v1/rates/de'), false);
      assert.deepEqual(written, []);
    } finally {
      await t.close();
    }
  });

  it('answers within the limit and counts only the requests it answers', async () => {
    const { t, answer, written } = await setUp(false);
    try {
      assert.equal(answer('/v1/rates/zz'), false, 'unknown country');
      assert.equal(answer('/v1/rates/de'), true);
      assert.equal(answer('/v1/rates/at'), true);
      assert.equal(answer('/v1/rates/de'), false, 'over the limit of 2: left to the route');
      assert.equal(answer('/v1/rates/de', '192.0.2.2'), true, 'another IP has its own budget');
      assert.equal(written.length, 3);
      assert.equal(written[0]?.status, 200);
      assert.equal(written[0]?.headers['content-length'], Buffer.byteLength(written[0]?.body ?? ''));
      assert.equal(JSON.parse(written[1]?.body ?? '').data.country_code, 'at');
    } finally {
      await t.close();
    }
  });

  it("states the length in bytes of every country's answer, names outside ASCII included", async () => {
    const { t, answer, written } = await setUp(false, 1000);
    try {
      const codes = t.container.rates.list().json.match(/"country_code":"([a-z]{2})"/g) ?? [];
      assert.ok(codes.length > 30);
      for (const code of codes.map((c) => c.slice(-3, -1)))
        assert.equal(answer(`/v1/rates/${code}`), true, code);
      const nonAscii = written.filter((w) => Buffer.byteLength(w.body) !== w.body.length);
      assert.ok(nonAscii.length >= 10, `${nonAscii.length} answers with non-ASCII names`);
      for (const w of written) assert.equal(w.headers['content-length'], Buffer.byteLength(w.body));
    } finally {
      await t.close();
    }
  });

  it('follows the clock to the rates in force today', async () => {
    const clock = createManualClock('2025-07-31T12:00:00.000Z');
    const t = await buildTestApp({}, { clock });
    try {
      const { base } = await (async () => {
        await t.app.listen({ host: '127.0.0.1', port: 0 });
        return { base: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` };
      })();
      assert.equal(JSON.parse((await get(base, '/v1/rates/ro')).body).data.standard_rate, 19);
      clock.set('2025-08-01T00:00:00.000Z');
      assert.equal(JSON.parse((await get(base, '/v1/rates/ro')).body).data.standard_rate, 21);
    } finally {
      await t.close();
    }
  });
});
