import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { PLAYGROUND_KEY, PLAYGROUND_PRINCIPAL } from '../../src/modules/playground/playground.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

const demo = { authorization: `Bearer ${PLAYGROUND_KEY}` };

describe('the playground demo key', () => {
  const clock = createManualClock('2026-11-22T12:10:00.000Z');
  let t: TestApp;
  before(async () => {
    // A Business key may make 2 requests a minute here: the demo key must not be held to that.
    t = await buildTestApp({ OPENVAT_RATE_LIMIT_BUSINESS: '2' }, { clock });
  });
  after(() => t.close());

  const validate = (vat: string, remoteAddress: string, headers: Record<string, string> = demo) =>
    t.app.inject({ method: 'GET', url: `/v1/validate?vat_number=${vat}`, headers, remoteAddress });
  const demoRates = (remoteAddress: string) =>
    t.app.inject({ method: 'GET', url: '/v1/rates/fr', headers: demo, remoteAddress });

  it('answers in test mode from a tenant of its own, and its audit records are its own', async () => {
    const res = await validate('DE100000008', '198.51.100.1');
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.data.valid, true);
    assert.equal(body.meta.source, 'vies');
    const audit = await t.app.inject({
      method: 'GET',
      url: `/v1/audits/${body.meta.request_id}`,
      headers: demo,
      remoteAddress: '198.51.100.1',
    });
    assert.equal(audit.statusCode, 200, audit.body);
    assert.equal(audit.json().data.request_id, body.meta.request_id);
    const stored = await t.container.db.kysely
      .selectFrom('audits')
      .select(['key_id'])
      .where('request_id', '=', body.meta.request_id)
      .executeTakeFirstOrThrow();
    assert.equal(stored.key_id, PLAYGROUND_PRINCIPAL.id);
    // Another key does not see the playground's records.
    const other = await t.key('business');
    const foreign = await t.app.inject({
      method: 'GET',
      url: `/v1/audits/${body.meta.request_id}`,
      headers: other.headers,
    });
    assert.equal(foreign.statusCode, 404);
    // The demo key is not stored as a key: the operator's list stays their own.
    assert.equal((await t.container.keys.listKeys()).length, 1);
  });

  it('cannot manage webhooks or read a usage report: 402', async () => {
    for (const [method, url] of [
      ['GET', '/v1/webhooks'],
      ['POST', '/v1/webhooks'],
      ['GET', '/v1/usage'],
    ] as const) {
      const res = await t.app.inject({
        method,
        url,
        headers: demo,
        remoteAddress: '198.51.100.2',
        ...(method === 'POST' ? { payload: { url: 'https://example.com/hook' } } : {}),
      });
      assert.equal(res.statusCode, 402, `${method} ${url}`);
      assert.equal(res.json().error.code, 'plan_required');
      const plans = url === '/v1/usage' ? ['free', 'starter', 'pro', 'business'] : ['pro', 'business'];
      assert.deepEqual(res.json().error.details.required_plans, plans);
      assert.match(res.json().error.message, /playground's demo key; use a key of your own/);
    }
    const rows = await t.container.db.kysely.selectFrom('webhook_endpoints').selectAll().execute();
    assert.equal(rows.length, 0);
  });

  it('may create batch jobs of at most 100 numbers', async () => {
    const post = (vat_numbers: string[]) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/validate/batch',
        headers: demo,
        remoteAddress: '198.51.100.3',
        payload: { vat_numbers, async: true },
      });
    const large = await post(Array.from({ length: 101 }, () => 'DE100000008'));
    assert.equal(large.statusCode, 400);
    assert.equal(large.json().error.code, 'batch_too_large');
    assert.deepEqual(large.json().error.details, { max: 100, got: 101 });
    const jobs = await t.container.db.kysely.selectFrom('batch_jobs').select('id').execute();
    assert.equal(jobs.length, 0, 'nothing stored');
    const small = await post(['DE100000008', 'DE300000002']);
    assert.equal(small.statusCode, 202, small.body);
    // A key of one's own is not held to it.
    const own = await t.key('business');
    const ownLarge = await t.app.inject({
      method: 'POST',
      url: '/v1/validate/batch',
      headers: own.headers,
      payload: { vat_numbers: Array.from({ length: 101 }, () => 'DE100000008'), async: true },
    });
    assert.equal(ownLarge.statusCode, 202);
  });

  it("its answers carry the x-ratelimit-* headers of the address's hourly budget, as its 429 counts it", async () => {
    const ip = '192.0.2.50';
    const budget = (res: { headers: Record<string, unknown> }) => [
      res.headers['x-ratelimit-limit'],
      res.headers['x-ratelimit-remaining'],
      res.headers['x-ratelimit-reset'],
    ];
    // It is 12:10: the hour's budget is whole again in 50 minutes.
    for (let i = 0; i < 30; i++) {
      const res = i % 6 === 5 ? await demoRates(ip) : await validate('DE300000002', ip);
      assert.equal(res.statusCode, 200, `request ${i + 1}: ${res.body}`);
      assert.deepEqual(budget(res), ['30', String(29 - i), '3000'], `request ${i + 1}`);
    }
    const over = await validate('DE300000002', ip);
    assert.equal(over.statusCode, 429);
    assert.deepEqual(budget(over), ['30', '0', '3000']);
    assert.equal(over.headers['retry-after'], over.headers['x-ratelimit-reset']);
    const overRates = await demoRates(ip);
    assert.equal(overRates.statusCode, 429);
    assert.deepEqual(budget(overRates), ['30', '0', '3000']);
    // Another address has its own budget.
    assert.deepEqual(budget(await validate('DE300000002', '192.0.2.51')), ['30', '29', '3000']);
  });

  it('allows 30 requests per hour per IP address, rates included, and is free of the per-key limit', async () => {
    const ip = '203.0.113.7';
    for (let i = 0; i < 20; i++) {
      const res = await validate('DE300000002', ip);
      assert.equal(res.statusCode, 200, `request ${i + 1}: ${res.body}`);
    }
    for (let i = 0; i < 10; i++) {
      const res = await demoRates(ip);
      assert.equal(res.statusCode, 200, `rates ${i + 1}`);
    }
    const over = await validate('DE300000002', ip);
    assert.equal(over.statusCode, 429);
    assert.equal(over.json().error.code, 'rate_limited');
    assert.match(over.json().error.message, /playground/);
    // The hour started at 12:00; it is 12:10.
    assert.equal(over.headers['retry-after'], String(50 * 60));
    const overRates = await demoRates(ip);
    assert.equal(overRates.statusCode, 429);
    assert.equal(overRates.headers['x-ratelimit-limit'], '30');
    // Without the demo key the rates stay public for that address, and other addresses keep their budget.
    const publicRates = await t.app.inject({ method: 'GET', url: '/v1/rates/fr', remoteAddress: ip });
    assert.equal(publicRates.statusCode, 200);
    assert.equal((await validate('DE300000002', '203.0.113.8')).statusCode, 200);
    // A key of one's own is held to its plan's limit, from the same address.
    const own = await t.key('business');
    assert.equal((await validate('DE300000002', ip, own.headers)).statusCode, 200);
    assert.equal((await validate('DE300000002', ip, own.headers)).statusCode, 200);
    assert.equal((await validate('DE300000002', ip, own.headers)).statusCode, 429);
    // The next hour brings a new budget.
    clock.set('2026-11-22T13:00:00.000Z');
    assert.equal((await validate('DE300000002', ip)).statusCode, 200);
  });
});

describe('the playground in the docs', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('/docs pre-fills the demo key as the bearer token', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/docs/' });
    assert.equal(page.statusCode, 200);
    const config = /Scalar\.createApiReference\('#app', ([\s\S]*?)\)\s*<\/script>/.exec(page.body)?.[1];
    assert.ok(config, 'the page starts the reference with a configuration');
    const parsed = JSON.parse(config);
    assert.equal(parsed.authentication.preferredSecurityScheme, 'apiKey');
    assert.equal(parsed.authentication.securitySchemes.apiKey.token, PLAYGROUND_KEY);
  });

  it('the API description names the demo key, its limit and where the magic numbers are', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const description: string = doc.info.description;
    assert.ok(description.includes(PLAYGROUND_KEY));
    assert.match(description, /30 requests per\s+hour\s+per IP address/);
    assert.match(description, /magic numbers listed under\s+`GET \/v1\/validate`/);
    const validate = doc.paths['/v1/validate'].get.description as string;
    assert.match(validate, /\| `DE100000008` \| 200, valid, company name and address \|/);
    assert.ok(doc.components.securitySchemes.apiKey, 'the scheme the script authorises exists');
  });
});

describe('the playground switched off', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ OPENVAT_PLAYGROUND: 'off' });
  });
  after(() => t.close());

  it('the demo key is an unknown key, and the docs neither load nor name it', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/v1/validate?vat_number=DE100000008',
      headers: demo,
    });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error.code, 'unauthorized');
    const page = await t.app.inject({ method: 'GET', url: '/docs/' });
    assert.equal(page.statusCode, 200);
    assert.ok(!page.body.includes(PLAYGROUND_KEY));
    assert.doesNotMatch(page.body, /"authentication"/);
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.ok(!doc.info.description.includes(PLAYGROUND_KEY));
    // With the demo key, rates are public as for anyone.
    for (let i = 0; i < 35; i++) {
      const rates = await t.app.inject({ method: 'GET', url: '/v1/rates/de', headers: demo });
      assert.equal(rates.statusCode, 200);
    }
  });
});
