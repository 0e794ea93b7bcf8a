import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, isUuidV7, type TestApp } from '../helpers/app.js';

/**
 * Errors raised before a route is found (the router refusing a path) are answered in the error
 * envelope with a request id, like every other error. The exact code is not the point here.
 */
describe('errors raised before routing', () => {
  let t: TestApp;
  let key: { authorization: string };

  before(async () => {
    t = await buildTestApp({ OPENVAT_PLAYGROUND: 'false' });
    key = (await t.key('business', 'test')).headers;
  });
  after(() => t.close());

  function assertEnvelope(
    res: { statusCode: number; headers: Record<string, unknown>; body: string },
    status: number,
  ) {
    assert.equal(res.statusCode, status, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const body = JSON.parse(res.body) as {
      error?: { code?: unknown; message?: unknown };
      meta?: { request_id?: unknown };
    };
    assert.equal(typeof body.error?.code, 'string');
    assert.equal(typeof body.error?.message, 'string');
    assert.ok(isUuidV7(body.meta?.request_id), res.body);
    assert.equal(res.headers['service-request-id'], body.meta?.request_id);
    assert.ok(!res.body.includes('FST_'), 'no framework code leaks');
  }

  it('a path parameter longer than the router allows → 414 in the envelope', async () => {
    for (const url of [`/v1/rates/${'a'.repeat(300)}`, `/v1/webhooks/${'b'.repeat(5_000)}`]) {
      const res = await t.app.inject({ method: 'GET', url, headers: key });
      assertEnvelope(res, 414);
      assert.ok(res.body.length < 1_000, 'the long path is not echoed back');
    }
  });

  it('a path that is not valid percent-encoded UTF-8 (lone surrogate, stray %) → 400 in the envelope', async () => {
    for (const url of [
      '/v1/rates/%ED%A0%80',
      '/v1/webhooks/%ED%A0%80',
      '/v1/rates/%',
      '/%ED%A0%80',
      '/v1/audits/%FF',
    ]) {
      assertEnvelope(await t.app.inject({ method: 'GET', url, headers: key }), 400);
    }
    assertEnvelope(
      await t.app.inject({ method: 'DELETE', url: '/v1/webhooks/%ED%A0%80', headers: key }),
      400,
    );
  });
});
