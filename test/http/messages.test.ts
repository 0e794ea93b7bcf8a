import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { errors } from '../../src/http/api-error.js';
import { planList, seconds } from '../../src/lib/errors.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('messages people read', () => {
  let t: TestApp;
  before(async () => {
    const port = await closedPort();
    t = await buildTestApp({
      VIES_URL: `http://127.0.0.1:${port}/vies/rest-api`,
      VIES_SOAP_URL: `http://127.0.0.1:${port}/vies/services/checkVatService`,
      OPENVAT_REGISTRY_TIMEOUT_MS: '1000',
      OPENVAT_REGISTRY_DEADLINE_MS: '1000',
    });
  });
  after(() => t.close());

  it('counts are plural-correct and plan lists read as people write them', () => {
    assert.equal(seconds(1), '1 second');
    assert.equal(seconds(30), '30 seconds');
    assert.equal(errors.rateLimited(1).message, 'Too many requests; retry after 1 second.');
    assert.equal(planList(['pro', 'business']), 'Pro or Business');
    assert.equal(planList(['starter', 'pro', 'business']), 'Starter, Pro or Business');
    assert.equal(planList(['business']), 'Business');
  });

  it('a plan refusal names the operation as a phrase and the plans as a list', async () => {
    const starter = await t.key('starter');
    const res = await t.app.inject({ method: 'GET', url: '/v1/webhooks', headers: starter.headers });
    assert.equal(res.statusCode, 402);
    assert.equal(
      res.json().error.message,
      "Webhook management is not included in this key's plan; it needs the Pro or Business plan.",
    );
  });

  it('a registry error names the registry and the member state', async () => {
    const live = await t.key('pro', 'live');
    const res = await t.app.inject({
      method: 'GET',
      url: '/v1/validate?vat_number=DE136695976',
      headers: live.headers,
    });
    assert.equal(res.statusCode, 502, res.body);
    assert.equal(res.json().error.code, 'registry_unavailable');
    assert.match(res.json().error.message, /^No answer from VIES for DE: .+\.$/);
  });

  it('a value of the wrong type is named with its article: an object, an array, a string', async () => {
    const pro = await t.key('pro');
    const post = (url: string, payload: unknown) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { ...pro.headers, 'content-type': 'application/json' },
        payload: JSON.stringify(payload),
      });
    const notObject = await post('/v1/validate/batch', ['DE100000008']);
    assert.equal(notObject.statusCode, 400, notObject.body);
    assert.equal(notObject.json().error.code, 'invalid_format');
    assert.equal(notObject.json().error.message, 'The body must be an object.');
    const notArray = await post('/v1/validate/batch', { vat_numbers: 'DE100000008' });
    assert.equal(notArray.json().error.message, 'Field "vat_numbers" in the body must be an array.');
    const notString = await post('/v1/validate/batch', { vat_numbers: [7] });
    assert.equal(notString.json().error.message, 'Field "vat_numbers.0" in the body must be a string.');
  });

  it('a query parameter that is not a whole number is refused in words, with its range', async () => {
    const pro = await t.key('pro');
    const get = async (url: string) => {
      const res = await t.app.inject({ method: 'GET', url, headers: pro.headers });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().error.code, 'invalid_format');
      return res.json().error.message as string;
    };
    for (const days of ['1.5', '0', '367', 'x', '-1', '1000']) {
      assert.equal(await get(`/v1/usage?days=${days}`), 'days must be a whole number between 1 and 366.');
    }
    const hook = '/v1/webhooks/00000000-0000-7000-8000-000000000000/deliveries';
    for (const limit of ['2.5', '0', '101']) {
      assert.equal(await get(`${hook}?limit=${limit}`), 'limit must be a whole number between 1 and 100.');
    }
    for (const limit of ['ten', '501']) {
      assert.equal(
        await get(`/v1/monitors?limit=${limit}`),
        'limit must be a whole number between 1 and 500.',
      );
    }
    for (const limit of ['1e3', '1001']) {
      assert.equal(
        await get(`/v1/monitors/changes?limit=${limit}`),
        'limit must be a whole number between 1 and 1000.',
      );
    }
  });
});
