import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { PLAYGROUND_KEY } from '../../src/modules/playground/playground.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

/**
 * The client address behind proxies, through a listening server on 127.0.0.1 (the connection's
 * peer is always 127.0.0.1 here): per-IP limits count the forwarded client only when that peer is a
 * trusted proxy.
 */
async function listening(env: Record<string, string>, log?: pino.Logger) {
  const t = await buildTestApp({ OPENVAT_PUBLIC_RATE_LIMIT: '2', ...env }, log ? { log } : {});
  const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
  const get = (path: string, forwardedFor: string | null, headers: Record<string, string> = {}) =>
    fetch(`${address}${path}`, {
      headers: { ...headers, ...(forwardedFor === null ? {} : { 'x-forwarded-for': forwardedFor }) },
    });
  return { t, get };
}

/** Remaining playground budget of the request's address after it (30 per hour per address). */
async function demoRemaining(get: Awaited<ReturnType<typeof listening>>['get'], forwardedFor: string) {
  const res = await get('/v1/validate?vat_number=DE300000002', forwardedFor, {
    authorization: `Bearer ${PLAYGROUND_KEY}`,
  });
  assert.equal(res.status, 200, await res.text());
  return res.headers.get('x-ratelimit-remaining');
}

async function closing(t: TestApp, run: () => Promise<void>) {
  try {
    await run();
  } finally {
    await t.close();
  }
}

describe('OPENVAT_TRUST_PROXY', () => {
  for (const [name, env] of [
    ['unset', {}],
    ['naming other proxies', { OPENVAT_TRUST_PROXY: '10.0.0.0/8, 192.168.1.1' }],
  ] as const) {
    it(`${name}: a spoofed X-Forwarded-For changes nothing, every request counts for the peer`, async () => {
      const { t, get } = await listening(env);
      await closing(t, async () => {
        // The public rates limit (2 per minute), on the fast path (today's rates) and through the route.
        assert.equal((await get('/v1/rates/de', '198.51.100.1')).status, 200);
        assert.equal((await get('/v1/rates/fr?date=2026-01-01', '198.51.100.2')).status, 200);
        const third = await get('/v1/rates/de', '198.51.100.3');
        assert.equal(third.status, 429);
        assert.equal((await get('/v1/rates/de?date=2026-01-01', '198.51.100.4')).status, 429);
        // The playground's hourly budget per address.
        assert.equal(await demoRemaining(get, '198.51.100.5'), '29');
        assert.equal(await demoRemaining(get, '198.51.100.6'), '28');
      });
    });
  }

  for (const trusted of ['127.0.0.1', 'loopback', '127.0.0.0/8, 10.0.0.0/8', '1']) {
    it(`"${trusted}": two forwarded clients get separate per-IP limits`, async () => {
      const { t, get } = await listening({ OPENVAT_TRUST_PROXY: trusted });
      await closing(t, async () => {
        for (const client of ['198.51.100.1', '198.51.100.2']) {
          assert.equal((await get('/v1/rates/de', client)).status, 200, client);
          assert.equal((await get('/v1/rates/fr?date=2026-01-01', client)).status, 200, client);
          assert.equal((await get('/v1/rates/de', client)).status, 429, client);
          assert.equal((await get('/v1/rates/de?date=2026-01-01', client)).status, 429, client);
        }
        // The proxy itself (no header) has its own budget.
        assert.equal((await get('/v1/rates/de', null)).status, 200);
        // A client cannot pick its address by prepending one: the proxy appends the real one, which counts.
        assert.equal((await get('/v1/rates/de', '203.0.113.9, 198.51.100.1')).status, 429);
        assert.equal(await demoRemaining(get, '198.51.100.5'), '29');
        assert.equal(await demoRemaining(get, '198.51.100.6'), '29');
        assert.equal(await demoRemaining(get, '198.51.100.5'), '28');
      });
    });
  }

  it('the request log names the forwarded client through a trusted proxy, the peer otherwise', async () => {
    for (const [env, expected] of [
      [{ OPENVAT_TRUST_PROXY: 'loopback' }, '198.51.100.7'],
      [{}, '127.0.0.1'],
    ] as const) {
      const lines: Array<{ msg?: string; req?: { remoteAddress?: string } }> = [];
      const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
      const { t, get } = await listening(env, log);
      await closing(t, async () => {
        assert.equal((await get('/v1/rates/de', '198.51.100.7')).status, 200);
        const incoming = lines.find((l) => l.msg === 'incoming request');
        assert.equal(incoming?.req?.remoteAddress, expected);
      });
    }
  });
});
