import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { buildTestApp, isUuidV7, type TestApp, type TestKey } from '../helpers/app.js';

// Test keys answer from the magic-number table; any other well-formed number is valid.
const SELLER_DE = 'DE136308783';
const SELLER_FR = 'FR40303265045';
const BUYER_FR = 'FR40303265045';
const BUYER_NL = 'NL002455799B11';

describe('POST /v1/decide', () => {
  let t: TestApp;
  let key: TestKey;
  const clock = createManualClock('2026-03-01T10:00:00.000Z');

  before(async () => {
    t = await buildTestApp({}, { clock });
    key = await t.key('starter', 'test');
  });
  after(() => t.close());

  const post = (payload: unknown, k: TestKey | null = key) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/decide',
      headers: k ? k.headers : {},
      payload: payload as Record<string, unknown>,
    });

  it('B2B services to another member state: reverse charge, with the mention in the buyer language', async () => {
    const res = await post({ seller_vat: 'DE100000008', buyer_vat: BUYER_FR });
    assert.equal(res.statusCode, 200, res.body);
    const { data, meta } = res.json();
    assert.equal(data.charge_vat, false);
    assert.equal(data.rate, 0);
    assert.equal(data.standard_rate, 20);
    assert.equal(data.mechanism, 'reverse_charge');
    assert.equal(data.country_of_taxation, 'FR');
    assert.deepEqual(data.articles, ['44', '196']);
    assert.match(data.legal_basis, /Articles 44 and 196 of Council Directive 2006\/112\/EC/);
    assert.match(data.invoice_note, /^Reverse charge/);
    assert.deepEqual(data.invoice_note_translations, [{ language: 'fr', text: 'Autoliquidation' }]);
    assert.ok(data.disclaimer.length > 20);
    assert.equal(data.customer_type, 'business');
    assert.equal(data.supply_type, 'services');
    assert.equal(data.supply_date, '2026-03-01');
    assert.equal(data.oss_threshold, null);
    assert.deepEqual(data.seller_vat, {
      vat_number: 'DE100000008',
      valid: true,
      country: { code: 'DE', name: 'Germany' },
    });
    assert.deepEqual(data.buyer_vat, {
      vat_number: BUYER_FR,
      valid: true,
      country: { code: 'FR', name: 'France' },
    });
    assert.equal(data.buyer_country, 'FR');
    assert.equal(data.decided_at, '2026-03-01T10:00:00.000Z');
    assert.ok(isUuidV7(meta.request_id));
    assert.equal(res.headers['service-request-id'], meta.request_id);
    assert.equal(
      res.headers['x-request-id'],
      meta.request_id,
      "X-Request-Id, read by the hosted API's clients",
    );
    assert.equal(typeof meta.latency_ms, 'number');
    assert.equal(meta.source_status, 'live');
    const live = {
      source: 'vies',
      source_status: 'live',
      cached: false,
      cached_at: null,
      stale_seconds: null,
    };
    assert.deepEqual(meta.sources, [
      { role: 'seller', vat_number: 'DE100000008', ...live },
      { role: 'buyer', vat_number: BUYER_FR, ...live },
    ]);
  });

  it('B2C digital services above the threshold: the buyer country and rate; GR and EL are both Greece', async () => {
    for (const country of ['el', 'GR']) {
      const res = await post({
        seller_vat: SELLER_DE,
        buyer_country: country,
        supply_type: 'digital_services',
        seller_eu_b2c_sales_ytd: 10_000.01,
        seller_eu_b2c_sales_last_year: 0,
      });
      assert.equal(res.statusCode, 200, res.body);
      const { data, meta } = res.json();
      assert.equal(data.mechanism, 'standard');
      assert.equal(data.charge_vat, true);
      assert.equal(data.rate, 24);
      assert.equal(data.country_of_taxation, 'GR');
      assert.deepEqual(data.articles, ['58']);
      assert.equal(data.invoice_note, '');
      assert.deepEqual(data.invoice_note_translations, []);
      assert.equal(data.buyer_vat, null);
      assert.equal(data.customer_type, 'consumer');
      assert.deepEqual(data.oss_threshold, {
        threshold: 10_000,
        currency: 'EUR',
        sales_ytd: 10_000.01,
        sales_last_year: 0,
        exceeded: true,
      });
      assert.equal(meta.sources.length, 1);
      assert.equal(meta.sources[0].role, 'seller');
    }
  });

  it('B2C digital services at exactly EUR 10,000: the seller country (Art. 59c)', async () => {
    const res = await post({
      seller_vat: SELLER_DE,
      buyer_country: 'nl',
      supply_type: 'digital_services',
      seller_eu_b2c_sales_ytd: 10_000,
      seller_eu_b2c_sales_last_year: 10_000,
    });
    const { data } = res.json();
    assert.equal(data.country_of_taxation, 'DE');
    assert.equal(data.rate, 19);
    assert.deepEqual(data.articles, ['59c']);
    assert.equal(data.oss_threshold.exceeded, false);
  });

  it('uses the rate in force on supply_date', async () => {
    const before = (
      await post({ seller_vat: 'FI20774740', buyer_country: 'FI', supply_date: '2024-08-31' })
    ).json();
    const after = (
      await post({ seller_vat: 'FI20774740', buyer_country: 'FI', supply_date: '2024-09-01' })
    ).json();
    assert.equal(before.data.rate, 24);
    assert.equal(after.data.rate, 25.5);
    assert.equal(after.data.supply_date, '2024-09-01');
  });

  it('intra-Community goods to a business: zero-rated under Art. 138, with the mention in Dutch', async () => {
    const res = await post({ seller_vat: SELLER_DE, buyer_vat: BUYER_NL, supply_type: 'goods' });
    const { data } = res.json();
    assert.equal(data.mechanism, 'zero_rated');
    assert.equal(data.rate, 0);
    assert.equal(data.country_of_taxation, 'NL');
    assert.deepEqual(data.articles, ['138']);
    assert.equal(data.invoice_note_translations[0].language, 'nl');
    assert.match(data.invoice_note_translations[0].text, /intracommunautaire levering/);
  });

  it('XI counts as a member state for goods and as the UK for services', async () => {
    const goods = (
      await post({ seller_vat: SELLER_DE, buyer_vat: 'XI980780684', supply_type: 'goods' })
    ).json();
    assert.equal(goods.data.mechanism, 'zero_rated');
    assert.equal(goods.data.country_of_taxation, 'XI');
    const services = (await post({ seller_vat: SELLER_DE, buyer_vat: 'XI980780684' })).json();
    assert.equal(services.data.mechanism, 'out_of_scope');
    assert.equal(services.data.country_of_taxation, 'GB');
    const xiSeller = await post({ seller_vat: 'XI980780684', buyer_vat: BUYER_FR, supply_type: 'goods' });
    assert.equal(xiSeller.statusCode, 200);
    assert.equal(xiSeller.json().data.mechanism, 'zero_rated');
    const xiServices = await post({ seller_vat: 'XI980780684', buyer_vat: BUYER_FR });
    assert.equal(xiServices.statusCode, 400);
    assert.equal(xiServices.json().error.code, 'seller_country_unsupported');
  });

  it('a buyer number the registry says is invalid makes the sale B2C, and says so', async () => {
    const res = await post({ seller_vat: SELLER_FR, buyer_vat: 'DE300000002' });
    assert.equal(res.statusCode, 200, res.body);
    const { data } = res.json();
    assert.equal(data.customer_type, 'consumer');
    assert.equal(data.mechanism, 'standard');
    assert.equal(data.country_of_taxation, 'FR');
    assert.equal(data.rate, 20);
    assert.deepEqual(data.articles, ['45']);
    assert.deepEqual(data.buyer_vat, {
      vat_number: 'DE300000002',
      valid: false,
      country: { code: 'DE', name: 'Germany' },
    });
    assert.match(data.explanation, /buyer's VAT number as not valid/);
  });

  it('a seller number the registry says is invalid is decided as given, and the explanation warns of it', async () => {
    const res = await post({ seller_vat: 'DE300000002', buyer_vat: 'FR40303265045' });
    assert.equal(res.statusCode, 200, res.body);
    const { data } = res.json();
    assert.equal(data.seller_vat.valid, false);
    assert.equal(data.mechanism, 'reverse_charge');
    assert.match(data.explanation, /the registry reports the seller's own VAT number as not valid/);
  });

  it('502 registry_unavailable with Retry-After when the buyer registry is down or throttling with nothing stored', async () => {
    for (const buyer of ['DE400000000', 'DE600000004']) {
      const res = await post({ seller_vat: SELLER_FR, buyer_vat: buyer });
      assert.equal(res.statusCode, 502, res.body);
      const body = res.json();
      assert.equal(body.error.code, 'registry_unavailable');
      assert.equal(body.error.details.field, 'buyer_vat');
      assert.match(String(res.headers['retry-after']), /^\d+$/);
    }
  });

  it('a degraded (stale) answer is used and reported in meta.sources', async () => {
    const res = await post({ seller_vat: SELLER_FR, buyer_vat: 'DE500000007' });
    assert.equal(res.statusCode, 200, res.body);
    const { data, meta } = res.json();
    assert.equal(data.mechanism, 'reverse_charge');
    assert.equal(data.country_of_taxation, 'DE');
    const buyer = meta.sources.find((s: { role: string }) => s.role === 'buyer');
    assert.equal(buyer.source_status, 'degraded');
    assert.equal(meta.source_status, 'degraded', 'the worst status of the look-ups');
    assert.equal(buyer.cached, true);
    assert.ok(buyer.stale_seconds > 0);
    assert.ok(buyer.cached_at);
  });

  it('a cached answer is reported as cached', async () => {
    const { meta } = (await post({ seller_vat: SELLER_FR, buyer_vat: 'DE700000001' })).json();
    assert.equal(meta.sources[1].source_status, 'cached');
    assert.equal(meta.sources[1].cached, true);
    assert.equal(meta.source_status, 'cached');
  });

  it('429 when the look-up is rate limited', async () => {
    const res = await post({ seller_vat: SELLER_FR, buyer_vat: 'DE800000009' });
    assert.equal(res.statusCode, 429);
    assert.equal(res.json().error.code, 'rate_limited');
    assert.ok(res.headers['retry-after']);
  });

  it('400 invalid_format for malformed bodies', async () => {
    const cases: [unknown, RegExp][] = [
      [{ seller_vat: SELLER_DE, buyer_vat: BUYER_FR, buyer_country: 'FR' }, /not both/],
      [{ seller_vat: SELLER_DE }, /buyer_vat .* or buyer_country/],
      [{ seller_vat: SELLER_DE, buyer_vat: BUYER_FR, amount: 5 }, /Unknown field "amount"/],
      [{ seller_vat: SELLER_DE, buyer_vat: BUYER_FR, supply_date: '2025-02-30' }, /calendar date/],
      [{ seller_vat: SELLER_DE, buyer_vat: BUYER_FR, supply_date: '2025/01/01' }, /supply_date/],
      [{ seller_vat: SELLER_DE, buyer_vat: BUYER_FR, supply_date: '2019-12-31' }, /no VAT rates/],
      [{ seller_vat: SELLER_DE, buyer_vat: BUYER_FR, supply_type: 'food' }, /supply_type/],
      [{ seller_vat: SELLER_DE, buyer_country: 'ZZ' }, /buyer_country/],
      [{ seller_vat: SELLER_DE, buyer_country: 'FRA' }, /buyer_country/],
      [
        { seller_vat: SELLER_DE, buyer_country: 'FR', seller_eu_b2c_sales_ytd: -1 },
        /seller_eu_b2c_sales_ytd/,
      ],
      [{ seller_vat: SELLER_DE, buyer_country: 'FR', seller_eu_b2c_sales_last_year: '100' }, /last_year/],
      [{ buyer_country: 'FR' }, /seller_vat/],
    ];
    for (const [payload, message] of cases) {
      const res = await post(payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      const body = res.json();
      assert.equal(body.error.code, 'invalid_format', JSON.stringify(payload));
      assert.match(body.error.message, message, JSON.stringify(payload));
      assert.ok(isUuidV7(body.meta.request_id));
    }
  });

  it('400 invalid_format names the field and the reason', async () => {
    const buyer = (await post({ seller_vat: SELLER_DE, buyer_vat: 'DE136308784' })).json();
    assert.equal(buyer.error.code, 'invalid_format');
    assert.deepEqual(buyer.error.details, { reason: 'checksum', field: 'buyer_vat' });
    const seller = (await post({ seller_vat: 'FR123', buyer_vat: BUYER_NL })).json();
    assert.equal(seller.error.code, 'invalid_format');
    assert.equal(seller.error.details.field, 'seller_vat');
  });

  it('400 seller_country_unsupported for a seller outside the EU', async () => {
    for (const seller of ['GB980780684', 'CHE116281710', 'NO965920358']) {
      const res = await post({ seller_vat: seller, buyer_vat: BUYER_FR });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error.code, 'seller_country_unsupported', seller);
    }
  });

  it('401 without a key, 402 for Free keys; every paid plan may decide', async () => {
    const none = await post({ seller_vat: SELLER_DE, buyer_vat: BUYER_FR }, null);
    assert.equal(none.statusCode, 401);
    const free = await post({ seller_vat: SELLER_DE, buyer_vat: BUYER_FR }, await t.key('free', 'test'));
    assert.equal(free.statusCode, 402);
    assert.equal(free.json().error.code, 'plan_required');
    for (const plan of ['starter', 'pro', 'business'] as const) {
      const res = await post({ seller_vat: SELLER_DE, buyer_vat: BUYER_FR }, await t.key(plan, 'test'));
      assert.equal(res.statusCode, 200, plan);
    }
  });

  it('writes an audit record with the exact response and the request body', async () => {
    const payload = { seller_vat: SELLER_DE, buyer_vat: BUYER_FR, supply_type: 'goods' };
    const res = await post(payload);
    const id = res.json().meta.request_id;
    const audit = await t.app.inject({ method: 'GET', url: `/v1/audits/${id}`, headers: key.headers });
    assert.equal(audit.statusCode, 200, audit.body);
    const record = audit.json().data;
    assert.equal(record.endpoint, 'decide');
    assert.deepEqual(record.response, res.json());
    assert.deepEqual(record.request_body, payload);
    assert.equal(record.valid, true);
    assert.equal(record.status_code, 200);
  });

  it('is documented in the OpenAPI description', async () => {
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const op = spec.paths['/v1/decide']?.post;
    assert.ok(op);
    assert.ok(op.requestBody);
    assert.ok(op.responses['200']);
  });
});

describe('POST /v1/decide without supply_date', () => {
  let t: TestApp;
  let key: TestKey;
  // Finland's standard rate went from 24% to 25.5% on 1 September 2024, at midnight in Helsinki (UTC+3).
  const clock = createManualClock('2024-08-31T23:30:00.000Z');

  before(async () => {
    t = await buildTestApp({}, { clock });
    key = await t.key('starter', 'test');
  });
  after(() => t.close());

  const post = (payload: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url: '/v1/decide', headers: key.headers, payload });

  it("is today in the country of taxation's time zone, not the UTC day", async () => {
    clock.set('2024-08-31T23:30:00.000Z');
    const { data } = (await post({ seller_vat: 'FI20774740', buyer_country: 'FI' })).json();
    assert.equal(data.country_of_taxation, 'FI');
    assert.equal(data.supply_date, '2024-09-01');
    assert.equal(data.rate, 25.5);
  });

  it("follows the place of supply: the buyer's country for a reverse charge, the seller's below the OSS threshold", async () => {
    // 21:30 UTC: 23:30 on 31 August in Berlin, 00:30 on 1 September in Helsinki.
    clock.set('2024-08-31T21:30:00.000Z');
    const reverse = (await post({ seller_vat: SELLER_DE, buyer_vat: 'FI20774740' })).json().data;
    assert.equal(reverse.mechanism, 'reverse_charge');
    assert.equal(reverse.country_of_taxation, 'FI');
    assert.equal(reverse.supply_date, '2024-09-01');
    assert.equal(reverse.standard_rate, 25.5);
    const belowThreshold = (
      await post({
        seller_vat: 'FI20774740',
        buyer_country: 'DE',
        supply_type: 'digital_services',
        seller_eu_b2c_sales_ytd: 0,
        seller_eu_b2c_sales_last_year: 0,
      })
    ).json().data;
    assert.equal(belowThreshold.country_of_taxation, 'FI');
    assert.equal(belowThreshold.supply_date, '2024-09-01');
    assert.equal(belowThreshold.rate, 25.5);
    const toGermany = (await post({ seller_vat: SELLER_DE, buyer_country: 'DE' })).json().data;
    assert.equal(toGermany.country_of_taxation, 'DE');
    assert.equal(toGermany.supply_date, '2024-08-31');
  });

  it('keeps a supply_date that is given', async () => {
    clock.set('2024-08-31T23:30:00.000Z');
    const { data } = (
      await post({ seller_vat: 'FI20774740', buyer_country: 'FI', supply_date: '2024-08-31' })
    ).json();
    assert.equal(data.supply_date, '2024-08-31');
    assert.equal(data.rate, 24);
  });
});
