import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';

type ErrorBody = { error: { code: string; message: string }; meta: { request_id: string } };

/** Every date the API takes goes through one parser: years 0–99 are not 1900–1999, and a date out of range is a 400. */
describe('dates in requests', () => {
  let t: TestApp;
  let key: TestKey;

  before(async () => {
    t = await buildTestApp({ OPENVAT_PLAYGROUND: 'false' });
    key = await t.key('business', 'test');
  });
  after(() => t.close());

  function assertRefused(
    res: { statusCode: number; json(): unknown; headers: Record<string, unknown> },
    field: string,
  ) {
    assert.equal(res.statusCode, 400, JSON.stringify(res.json()));
    const body = res.json() as ErrorBody;
    assert.equal(typeof body.error.code, 'string');
    assert.match(body.error.message, new RegExp(field));
    assert.match(body.error.message, /1900-01-01.*9999-12-31|YYYY-MM-DD/);
    assert.equal(body.meta.request_id, res.headers['service-request-id']);
  }

  const early = ['0000-01-01', '0001-01-01', '0099-12-31', '0100-01-01', '1899-12-31'];

  it('GET /v1/rates/{country} and GET /v1/rates refuse early years with a 400, not a 500', async () => {
    for (const date of early) {
      assertRefused(await t.app.inject({ method: 'GET', url: `/v1/rates/de?date=${date}` }), 'date');
      assertRefused(await t.app.inject({ method: 'GET', url: `/v1/rates?date=${date}` }), 'date');
    }
  });

  it('POST /v1/decide refuses an early supply_date with a 400, not a 500', async () => {
    for (const date of early) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/decide',
        headers: key.headers,
        payload: {
          seller_vat: 'DE100000008',
          buyer_vat: 'ATU14243102',
          supply_date: date,
        },
      });
      assertRefused(res, 'supply_date');
    }
  });

  it('still answers ordinary dates and refuses impossible ones', async () => {
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/v1/rates/de?date=2024-02-29' })).statusCode,
      200,
    );
    for (const date of ['2023-02-29', '2024-13-01', '24-01-01', '10000-01-01']) {
      assertRefused(await t.app.inject({ method: 'GET', url: `/v1/rates/de?date=${date}` }), 'date');
    }
  });
});
