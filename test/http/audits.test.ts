import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import { assertErrorBody } from '../helpers/error-body.js';

describe('audit records', () => {
  let t: TestApp;
  const clock = createManualClock('2026-11-22T12:00:00.000Z');
  let starter: TestKey;
  let pro: TestKey;
  let business: TestKey;
  let free: TestKey;

  before(async () => {
    t = await buildTestApp({}, { clock });
    starter = await t.key('starter');
    pro = await t.key('pro');
    business = await t.key('business');
    free = await t.key('free');
  });
  after(() => t.close());

  async function validate(key: TestKey, vat = 'DE100000008') {
    const res = await t.app.inject({
      method: 'GET',
      url: `/v1/validate?vat_number=${vat}&cache=true`,
      headers: key.headers,
    });
    assert.equal(res.statusCode, 200);
    return res;
  }

  const audit = (key: TestKey, id: string) =>
    t.app.inject({ method: 'GET', url: `/v1/audits/${id}`, headers: key.headers });

  it('returns the record to the key that made the call, with the response byte for byte', async () => {
    const res = await validate(pro);
    const id = res.json().meta.request_id;
    const got = await audit(pro, id);
    assert.equal(got.statusCode, 200);
    const record = got.json().data;
    assert.equal(record.request_id, id);
    assert.equal(record.endpoint, 'validate');
    assert.deepEqual(record.request_body, { vat_number: 'DE100000008', cache: 'true' });
    assert.equal(record.status_code, 200);
    assert.equal(record.valid, true);
    assert.equal(record.created_at, '2026-11-22T12:00:00.000Z');
    assert.equal(record.expires_at, '2026-12-22T12:00:00.000Z');
    assert.ok(Number.isInteger(record.latency_ms));
    // Byte for byte: the raw text of `response` inside the audit body is the original body.
    const raw = got.body;
    const start = raw.indexOf('"response":') + '"response":'.length;
    assert.equal(raw.slice(start, start + res.body.length), res.body);
    assert.notEqual(got.json().meta.request_id, id, 'the look-up has its own request id');
  });

  it("the README tour's answers: validate, batch and decide successes read back; rates and error answers do not, as it says", async () => {
    const kept = [
      await t.app.inject({
        method: 'GET',
        url: '/v1/validate?vat_number=DE100000008',
        headers: business.headers,
      }),
      await t.app.inject({
        method: 'POST',
        url: '/v1/validate/batch',
        headers: business.headers,
        payload: { vat_numbers: ['DE100000008', 'FR40303265045', 'DE123'] },
      }),
      await t.app.inject({
        method: 'POST',
        url: '/v1/decide',
        headers: business.headers,
        payload: { seller_vat: 'DE136308783', buyer_vat: 'FR40303265045' },
      }),
    ];
    const notKept = [
      await t.app.inject({ method: 'GET', url: '/v1/rates/de' }),
      await t.app.inject({ method: 'GET', url: '/v1/rates/fr?date=2021-06-01' }),
      // The registry does not answer: 502.
      await t.app.inject({
        method: 'GET',
        url: '/v1/validate?vat_number=DE400000000',
        headers: business.headers,
      }),
      await t.app.inject({ method: 'GET', url: '/v1/usage', headers: business.headers }),
    ];
    for (const res of kept) {
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((await audit(business, res.json().meta.request_id)).statusCode, 200, res.body);
    }
    assert.equal(notKept[2]?.statusCode, 502);
    for (const res of notKept) {
      assert.equal((await audit(business, res.json().meta.request_id)).statusCode, 404, res.body);
    }
    const readme = readFileSync('README.md', 'utf8');
    assert.match(
      readme,
      /successful validate, batch, decide and confirm answers are kept \(rates and error answers are not\)/,
    );
    assert.doesNotMatch(readme, /meta\.request_id of any answer above/);
  });

  it('an answer the client received is recorded as delivered, also once its connection has closed', async () => {
    const res = await validate(pro, 'DE100000016');
    const id = res.json().meta.request_id;
    // The in-process connection closes after the answer; nothing may mark it undelivered then.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const got = await audit(pro, id);
    assert.equal(got.statusCode, 200);
    assert.equal(got.json().data.delivered, true);
  });

  it('any other key, an unknown id and every Free key get the same 404', async () => {
    const id = (await validate(pro)).json().meta.request_id;
    const freeId = (await validate(free)).json().meta.request_id;
    const other = await audit(business, id);
    const unknown = await audit(pro, '01900000-0000-7000-8000-000000000000');
    const freeOwn = await audit(free, freeId);
    const injected = await audit(pro, "x' OR '1'='1");
    const message = 'No audit record with this request_id for this key.';
    for (const res of [other, unknown, freeOwn, injected])
      assertErrorBody(res, 404, { code: 'not_found', message });
  });

  it('keeps records 7 days for Starter, 30 for Pro and 90 for Business', async () => {
    clock.set('2026-11-22T12:00:00.000Z');
    const ids = {
      starter: (await validate(starter)).json().meta.request_id,
      pro: (await validate(pro)).json().meta.request_id,
      business: (await validate(business)).json().meta.request_id,
    };
    const visible = async () => ({
      starter: (await audit(starter, ids.starter)).statusCode,
      pro: (await audit(pro, ids.pro)).statusCode,
      business: (await audit(business, ids.business)).statusCode,
    });
    clock.set('2026-11-29T11:59:59.000Z');
    assert.deepEqual(await visible(), { starter: 200, pro: 200, business: 200 });
    clock.set('2026-11-29T12:00:00.000Z');
    assert.deepEqual(await visible(), { starter: 404, pro: 200, business: 200 });
    clock.set('2026-12-22T12:00:00.000Z');
    assert.deepEqual(await visible(), { starter: 404, pro: 404, business: 200 });
    clock.set('2027-02-20T12:00:00.000Z');
    assert.deepEqual(await visible(), { starter: 404, pro: 404, business: 404 });
    clock.set('2026-11-22T12:00:00.000Z');
  });

  it('the purge job deletes expired records in bounded batches and leaves the rest', async () => {
    clock.set('2026-11-22T12:00:00.000Z');
    for (let i = 0; i < 12; i++) await validate(starter);
    const keep = (await validate(business)).json().meta.request_id;
    const before = await t.container.audits.purgeExpired(5);
    assert.equal(before, 0, 'nothing has expired yet');
    clock.set('2026-12-01T00:00:00.000Z');
    const deleted = await t.container.audits.purgeExpired(5);
    assert.ok(deleted >= 12, `deleted ${deleted}`);
    assert.equal((await audit(business, keep)).statusCode, 200);
    const remaining = await t.container.db.kysely.selectFrom('audits').select('expires_at').execute();
    assert.ok(remaining.every((r) => r.expires_at > '2026-12-01T00:00:00.000Z'));
    clock.set('2026-11-22T12:00:00.000Z');
  });

  it('writes nothing when the call is refused', async () => {
    const count = async () =>
      (await t.container.db.kysely.selectFrom('audits').select('request_id').execute()).length;
    const n = await count();
    await t.app.inject({ method: 'GET', url: '/v1/validate?vat_number=DE136695977', headers: pro.headers });
    await t.app.inject({ method: 'GET', url: '/v1/validate?vat_number=DE400000000', headers: pro.headers });
    assert.equal(await count(), n);
  });
});
