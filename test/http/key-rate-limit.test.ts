import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';

describe('per-key rate limits by plan', () => {
  let t: TestApp;
  let free: TestKey;
  let otherFree: TestKey;
  let pro: TestKey;

  before(async () => {
    t = await buildTestApp({ OPENVAT_RATE_LIMIT_FREE: '3', OPENVAT_RATE_LIMIT_PRO: '5' });
    free = await t.key('free');
    otherFree = await t.key('free');
    pro = await t.key('pro');
  });
  after(() => t.close());

  const validate = (key: TestKey) =>
    t.app.inject({ method: 'GET', url: '/v1/validate?vat_number=DE100000008', headers: key.headers });

  it('answers 429 rate_limited with Retry-After once a key has used its plan limit', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await validate(free)).statusCode, 200);
    const limited = await validate(free);
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().error.code, 'rate_limited');
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.ok(limited.json().meta.request_id);
  });

  it('counts per key, not per IP, and by the plan of the key', async () => {
    assert.equal(
      (await validate(otherFree)).statusCode,
      200,
      'another key from the same IP has its own budget',
    );
    for (let i = 0; i < 5; i++) assert.equal((await validate(pro)).statusCode, 200);
    assert.equal((await validate(pro)).statusCode, 429);
  });

  it('tells each answer the limit, what is left of it and when the window resets', async () => {
    const key = await t.key('pro');
    const first = await validate(key);
    const second = await validate(key);
    assert.equal(first.headers['x-ratelimit-limit'], '5');
    assert.equal(first.headers['x-ratelimit-remaining'], '4');
    assert.equal(second.headers['x-ratelimit-remaining'], '3');
    const reset = Number(second.headers['x-ratelimit-reset']);
    assert.ok(reset >= 1 && reset <= 60, `reset ${reset}`);
  });

  it('an unauthenticated call is refused before it counts against anything', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/validate?vat_number=DE100000008' });
    assert.equal(res.statusCode, 401);
  });
});
