import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { errors, planList, seconds } from '../../src/lib/errors.js';
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
});
