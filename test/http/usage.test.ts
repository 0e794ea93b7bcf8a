import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';

describe('GET /v1/usage', () => {
  const clock = createManualClock('2026-11-22T12:00:00.000Z');
  let t: TestApp;
  let key: TestKey;
  before(async () => {
    t = await buildTestApp({ OPENVAT_RATE_LIMIT_STARTER: '4' }, { clock });
    key = await t.key('starter');
  });
  after(() => t.close());

  const get = (url: string, headers: Record<string, string>) => t.app.inject({ method: 'GET', url, headers });

  it("counts the key's answers per day and operation, errors included", async () => {
    assert.equal((await get('/v1/validate?vat_number=DE100000008', key.headers)).statusCode, 200);
    assert.equal((await get('/v1/validate?vat_number=DE123', key.headers)).statusCode, 400);
    clock.set('2026-11-23T09:00:00.000Z');
    const batch = await t.app.inject({
      method: 'POST',
      url: '/v1/validate/batch',
      headers: key.headers,
      payload: { vat_numbers: ['DE100000008'] },
    });
    assert.equal(batch.statusCode, 402, 'batch is not in Starter: counted as an error');
    // Unknown keys and public routes are not counted against anyone.
    assert.equal(
      (await get('/v1/validate?vat_number=DE100000008', { authorization: 'Bearer nope' })).statusCode,
      401,
    );
    assert.equal((await get('/v1/rates/de', key.headers)).statusCode, 200);

    const res = await get('/v1/usage?days=2', key.headers);
    assert.equal(res.statusCode, 200, res.body);
    const { data, meta } = res.json();
    assert.ok(meta.request_id);
    assert.equal(data.key_id, key.id);
    assert.equal(data.plan, 'starter');
    assert.equal(data.mode, 'test');
    assert.equal(data.requests_per_minute, 4);
    assert.equal(data.from, '2026-11-22');
    assert.equal(data.to, '2026-11-23');
    assert.deepEqual(data.daily, [
      { date: '2026-11-22', requests: 2, errors: 1 },
      { date: '2026-11-23', requests: 1, errors: 1 },
    ]);
    assert.deepEqual(data.operations, [
      { operation: 'validate', requests: 2, errors: 1 },
      { operation: 'batch', requests: 1, errors: 1 },
    ]);
    assert.deepEqual(data.totals, { requests: 3, errors: 2 });
  });

  it('counts the usage look-ups and rate-limited answers too, each look-up seeing those before it', async () => {
    const own = await t.key('starter');
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push((await get('/v1/usage?days=1', own.headers)).statusCode);
    assert.deepEqual(answers, [200, 200, 200, 200, 429], 'Starter allows 4 requests a minute here');
    // The fifth look-up was refused; the report of the service shows all five.
    const report = await t.container.usage.report(
      { id: own.id, accountId: own.accountId, plan: 'starter', mode: 'test', defaultRequesterVat: null },
      1,
    );
    assert.deepEqual(report.operations, [{ operation: 'usage', requests: 5, errors: 1 }]);
  });

  it('shows a key only its own usage', async () => {
    const other = await t.key('pro');
    const first = (await get('/v1/usage', other.headers)).json().data;
    assert.equal(first.key_id, other.id);
    assert.equal(first.daily.length, 30);
    assert.deepEqual(first.operations, [], 'a look-up does not count itself');
    const second = (await get('/v1/usage', other.headers)).json().data;
    assert.deepEqual(second.operations, [{ operation: 'usage', requests: 1, errors: 0 }]);
  });

  it('refuses a bad period or unknown parameters with a 400 envelope', async () => {
    const other = await t.key('business');
    for (const url of ['/v1/usage?days=0', '/v1/usage?days=367', '/v1/usage?days=x', '/v1/usage?day=3']) {
      const res = await get(url, other.headers);
      assert.equal(res.statusCode, 400, url);
      assert.equal(res.json().error.code, 'invalid_format');
    }
    assert.equal((await get('/v1/usage', {})).statusCode, 401);
  });

  it('writes the counts to the database on shutdown', async () => {
    const local = await buildTestApp({}, { clock });
    const k = await local.key('pro');
    await local.app.inject({ method: 'GET', url: '/v1/validate?vat_number=DE100000008', headers: k.headers });
    const db = local.container.db;
    await local.app.close();
    // The container's close writes the pending counts before it closes the database.
    let rows: unknown[] = [];
    const original = db.close;
    db.close = async () => {
      rows = await db.kysely.selectFrom('usage_daily').selectAll().where('key_id', '=', k.id).execute();
      await original.call(db);
    };
    await local.container.close();
    assert.equal(rows.length, 1);
  });
});
