import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { buildTestApp, isUuidV7, type TestApp } from '../helpers/app.js';
import { assertErrorBody } from '../helpers/error-body.js';

const FIELDS = [
  'country_code',
  'country_name',
  'country_name_local',
  'currency',
  'is_eu_member',
  'supports_live_validation',
  'standard_rate',
  'reduced_rates',
  'super_reduced_rate',
  'parking_rate',
  'vat_name',
  'vat_abbr',
  'vat_number_format',
  'vat_number_regex',
  'registration_threshold',
  'updated_at',
  'regions',
].sort();

const EU = 'at be bg cy cz de dk ee es fi fr gr hr hu ie it lt lu lv mt nl pl pt ro se si sk'.split(' ');

describe('GET /v1/rates', () => {
  let t: TestApp;
  const clock = createManualClock('2026-11-22T12:00:00.000Z');

  before(async () => {
    t = await buildTestApp({ OPENVAT_PUBLIC_RATE_LIMIT: '1000' }, { clock });
  });
  after(() => t.close());

  it('answers one country with every field of the rate object and the rates meta, without a key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/rates/de' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const body = res.json();
    assert.deepEqual(Object.keys(body.data).sort(), FIELDS);
    assert.equal(body.data.country_code, 'de');
    assert.equal(body.data.country_name, 'Germany');
    assert.equal(body.data.currency, 'EUR');
    assert.equal(body.data.is_eu_member, true);
    assert.equal(body.data.supports_live_validation, true);
    assert.equal(body.data.standard_rate, 19);
    assert.deepEqual(body.data.reduced_rates, [7]);
    assert.equal(body.data.super_reduced_rate, null);
    assert.equal(body.data.registration_threshold.distance_selling, 10000);
    assert.match(body.data.updated_at, /^\d{4}-\d{2}-\d{2}$/);
    assert.ok(new RegExp(body.data.vat_number_regex).test('DE136695976'));
    assert.deepEqual(Object.keys(body.meta).sort(), ['cached', 'data_version', 'latency_ms', 'request_id']);
    assert.equal(body.meta.cached, true);
    assert.match(body.meta.data_version, /^\d{4}-\d{2}-\d{2}$/);
    assert.ok(isUuidV7(body.meta.request_id));
    assert.equal(res.headers['service-request-id'], body.meta.request_id);
    assert.match(String(res.headers['cache-control']), /max-age=\d+/);
    assert.ok(res.headers.etag);
  });

  it('is case-insensitive on the country', async () => {
    const lower = (await t.app.inject({ method: 'GET', url: '/v1/rates/fr' })).json();
    const upper = (await t.app.inject({ method: 'GET', url: '/v1/rates/FR' })).json();
    assert.deepEqual(lower.data, upper.data);
  });

  it('answers XI as an EU member with UK rates in GBP, and non-EU countries', async () => {
    const xi = (await t.app.inject({ method: 'GET', url: '/v1/rates/xi' })).json().data;
    assert.equal(xi.is_eu_member, true);
    assert.equal(xi.currency, 'GBP');
    assert.equal(xi.standard_rate, 20);
    const gb = (await t.app.inject({ method: 'GET', url: '/v1/rates/gb' })).json().data;
    assert.equal(gb.is_eu_member, false);
    assert.equal(gb.registration_threshold.distance_selling, null);
    const ch = (await t.app.inject({ method: 'GET', url: '/v1/rates/ch' })).json().data;
    assert.equal(ch.standard_rate, 8.1);
    assert.equal(ch.currency, 'CHF');
    const li = (await t.app.inject({ method: 'GET', url: '/v1/rates/li' })).json().data;
    assert.equal(li.supports_live_validation, false);
  });

  it('lists every country, including the 27 member states, XI, GB, CH, LI and NO', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/rates' });
    assert.equal(res.statusCode, 200);
    const codes = (res.json().data as Array<{ country_code: string }>).map((c) => c.country_code);
    for (const code of [...EU, 'xi', 'gb', 'ch', 'li', 'no']) assert.ok(codes.includes(code), code);
    assert.deepEqual(codes, [...codes].sort());
    const members = (res.json().data as Array<{ is_eu_member: boolean }>).filter(
      (c) => c.is_eu_member,
    ).length;
    assert.equal(members, 28);
  });

  it('covers at least 60 countries, beyond Europe too', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/rates' });
    const body = res.json();
    assert.ok(body.meta.count >= 60, `${body.meta.count} countries`);
    assert.equal(body.data.length, body.meta.count);
    const codes = (body.data as Array<{ country_code: string }>).map((c) => c.country_code);
    for (const code of ['ua', 'au', 'nz', 'sg', 'jp', 'kr', 'ca', 'za', 'in', 'sa', 'ae']) {
      assert.ok(codes.includes(code), code);
    }
    for (const c of body.data) {
      assert.deepEqual(Object.keys(c).sort(), FIELDS, c.country_code);
      assert.ok(Array.isArray(c.regions), c.country_code);
    }
  });

  it('answers Australia, Japan and Singapore with their rates and the threshold for sellers abroad', async () => {
    const au = (await t.app.inject({ method: 'GET', url: '/v1/rates/AU' })).json().data;
    assert.equal(au.standard_rate, 10);
    assert.deepEqual(au.reduced_rates, []);
    assert.equal(au.currency, 'AUD');
    assert.equal(au.is_eu_member, false);
    assert.equal(au.supports_live_validation, false);
    assert.equal(au.vat_abbr, 'GST');
    assert.deepEqual(au.registration_threshold, {
      domestic: 75000,
      distance_selling: null,
      currency: 'AUD',
      non_resident: { amount: 75000, currency: 'AUD' },
    });
    assert.deepEqual(au.regions, []);
    const jp = (await t.app.inject({ method: 'GET', url: '/v1/rates/jp' })).json().data;
    assert.equal(jp.standard_rate, 10);
    assert.deepEqual(jp.reduced_rates, [8]);
    const sg = (await t.app.inject({ method: 'GET', url: '/v1/rates/sg?date=2023-12-31' })).json().data;
    assert.equal(sg.standard_rate, 8);
    const de = (await t.app.inject({ method: 'GET', url: '/v1/rates/de' })).json().data;
    assert.deepEqual(de.registration_threshold.non_resident, { amount: 0, currency: 'EUR' });
    const rs = (await t.app.inject({ method: 'GET', url: '/v1/rates/rs' })).json().data;
    assert.equal(rs.registration_threshold.non_resident, null, 'not tracked for the row');
  });

  it("answers Canada's GST with its HST provinces, and Nova Scotia's change at midnight in Ottawa", async () => {
    const ca = (await t.app.inject({ method: 'GET', url: '/v1/rates/ca' })).json().data;
    assert.equal(ca.standard_rate, 5);
    assert.equal(ca.vat_abbr, 'GST/HST');
    assert.deepEqual(
      ca.regions.map((r: { code: string; standard_rate: number }) => [r.code, r.standard_rate]),
      [
        ['ca-nb', 15],
        ['ca-nl', 15],
        ['ca-ns', 14],
        ['ca-on', 13],
        ['ca-pe', 15],
      ],
    );
    assert.deepEqual(ca.regions[3], {
      code: 'ca-on',
      name: 'Ontario',
      vat_name: 'Harmonized Sales Tax',
      vat_abbr: 'HST',
      standard_rate: 13,
      from: '2020-01-01',
    });
    const ns = (res: {
      json(): { data: { regions: Array<{ code: string; standard_rate: number; from: string }> } };
    }) => res.json().data.regions.find((r) => r.code === 'ca-ns');
    const before = await t.app.inject({ method: 'GET', url: '/v1/rates/ca?date=2025-03-31' });
    const after = await t.app.inject({ method: 'GET', url: '/v1/rates/ca?date=2025-04-01' });
    assert.equal(ns(before)?.standard_rate, 15);
    assert.deepEqual(ns(after), {
      code: 'ca-ns',
      name: 'Nova Scotia',
      vat_name: 'Harmonized Sales Tax',
      vat_abbr: 'HST',
      standard_rate: 14,
      from: '2025-04-01',
    });
    assert.notEqual(before.headers.etag, after.headers.etag, 'a province change is a new answer');
    // 03:30 UTC on 1 April is still 31 March (23:30) in Ottawa; 04:30 UTC is 1 April there.
    clock.set('2025-04-01T03:30:00.000Z');
    const lateEvening = await t.app.inject({ method: 'GET', url: '/v1/rates/ca' });
    clock.set('2025-04-01T04:30:00.000Z');
    const midnight = await t.app.inject({ method: 'GET', url: '/v1/rates/ca' });
    const list = (await t.app.inject({ method: 'GET', url: '/v1/rates' })).json().data;
    clock.set('2026-11-22T12:00:00.000Z');
    assert.equal(ns(lateEvening)?.standard_rate, 15);
    assert.equal(ns(midnight)?.standard_rate, 14);
    assert.notEqual(lateEvening.headers.etag, midnight.headers.etag);
    const caInList = list.find((c: { country_code: string }) => c.country_code === 'ca');
    assert.equal(caInList.regions.find((r: { code: string }) => r.code === 'ca-ns').standard_rate, 14);
  });

  it('answers the rates in force on a given date', async () => {
    const before = (await t.app.inject({ method: 'GET', url: '/v1/rates/fi?date=2024-08-31' })).json().data;
    const afterChange = (await t.app.inject({ method: 'GET', url: '/v1/rates/fi?date=2024-09-01' })).json()
      .data;
    assert.equal(before.standard_rate, 24);
    assert.equal(afterChange.standard_rate, 25.5);
    const de2020 = (await t.app.inject({ method: 'GET', url: '/v1/rates/de?date=2020-08-01' })).json().data;
    assert.equal(de2020.standard_rate, 16);
    const ee = (await t.app.inject({ method: 'GET', url: '/v1/rates/ee?date=2025-07-01' })).json().data;
    assert.equal(ee.standard_rate, 24);
  });

  it('follows the clock: today is the default date', async () => {
    clock.set('2025-07-31T12:00:00.000Z');
    const ro2025 = (await t.app.inject({ method: 'GET', url: '/v1/rates/ro' })).json().data;
    clock.set('2025-08-01T12:00:00.000Z');
    const ro2025b = (await t.app.inject({ method: 'GET', url: '/v1/rates/ro' })).json().data;
    clock.set('2026-11-22T12:00:00.000Z');
    assert.equal(ro2025.standard_rate, 19);
    assert.equal(ro2025b.standard_rate, 21);
  });

  it('304 with If-None-Match, and a new ETag when the rates in force change', async () => {
    const first = await t.app.inject({ method: 'GET', url: '/v1/rates/de' });
    const etag = String(first.headers.etag);
    const again = await t.app.inject({
      method: 'GET',
      url: '/v1/rates/de',
      headers: { 'if-none-match': etag },
    });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    assert.ok(again.headers['service-request-id']);
    const list = await t.app.inject({ method: 'GET', url: '/v1/rates' });
    const listAgain = await t.app.inject({
      method: 'GET',
      url: '/v1/rates',
      headers: { 'if-none-match': String(list.headers.etag) },
    });
    assert.equal(listAgain.statusCode, 304);
    const fiBefore = await t.app.inject({ method: 'GET', url: '/v1/rates/fi?date=2024-08-31' });
    const fiAfter = await t.app.inject({ method: 'GET', url: '/v1/rates/fi?date=2024-09-01' });
    assert.notEqual(fiBefore.headers.etag, fiAfter.headers.etag);
    const stale = await t.app.inject({
      method: 'GET',
      url: '/v1/rates/de',
      headers: { 'if-none-match': 'W/"old"' },
    });
    assert.equal(stale.statusCode, 200);
  });

  it('400 for a malformed country code or date, 404 for an unknown country or a date before the history', async () => {
    for (const url of [
      '/v1/rates/deu',
      '/v1/rates/d1',
      '/v1/rates/%27%20OR%201%3D1',
      '/v1/rates/de?date=2025-02-30',
      '/v1/rates/de?date=yesterday',
      '/v1/rates/de?foo=1',
    ]) {
      const res = await t.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 400, url);
      assert.equal(res.json().error.code, 'invalid_format', url);
    }
    const unknown = await t.app.inject({ method: 'GET', url: '/v1/rates/zz' });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().error.code, 'not_found');
    // Greece's VAT prefix is not its ISO code: the answer says which code to ask for.
    const greece = await t.app.inject({ method: 'GET', url: '/v1/rates/EL' });
    assert.equal(greece.statusCode, 404);
    assert.match(greece.json().error.message, /ISO 3166-1 code is "gr" \(GET \/v1\/rates\/gr\)/);
    const early = await t.app.inject({ method: 'GET', url: '/v1/rates/de?date=1990-01-01' });
    assert.equal(early.statusCode, 404);
  });

  it('answers each 404 with its exact error body, the code as asked in lower case', async () => {
    const cases: Array<[string, string]> = [
      ['/v1/rates/zz', 'No VAT rates for country "zz".'],
      ['/v1/rates/ZZ?date=2026-01-01', 'No VAT rates for country "zz".'],
      [
        '/v1/rates/EL',
        'No VAT rates for country "el": EL is Greece\'s VAT prefix; its ISO 3166-1 code is "gr" (GET /v1/rates/gr).',
      ],
      [
        '/v1/rates/el?date=2026-01-01',
        'No VAT rates for country "el": EL is Greece\'s VAT prefix; its ISO 3166-1 code is "gr" (GET /v1/rates/gr).',
      ],
      [
        '/v1/rates/DE?date=1990-01-01',
        'No rates recorded for "de" on 1990-01-01; the history starts on 2020-01-01.',
      ],
    ];
    // Twice: the second answer may come from the look-up's memo.
    for (const round of [1, 2]) {
      for (const [url, message] of cases) {
        const res = await t.app.inject({ method: 'GET', url });
        assertErrorBody(res, 404, { code: 'not_found', message }, `${url} (${round})`);
      }
    }
  });
});

describe('rates rate limit', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ OPENVAT_PUBLIC_RATE_LIMIT: '3' });
  });
  after(() => t.close());

  it('answers 429 rate_limited with Retry-After per IP once the limit is used', async () => {
    for (let i = 0; i < 3; i++) {
      const ok = await t.app.inject({ method: 'GET', url: i === 1 ? '/v1/rates' : '/v1/rates/de' });
      assert.equal(ok.statusCode, 200);
      assert.equal(ok.headers['x-ratelimit-limit'], undefined, 'headers only once the limit is reached');
    }
    const res = await t.app.inject({ method: 'GET', url: '/v1/rates/de' });
    assert.equal(res.statusCode, 429);
    assert.equal(res.json().error.code, 'rate_limited');
    assert.ok(isUuidV7(res.json().meta.request_id));
    const retryAfter = Number(res.headers['retry-after']);
    assert.ok(retryAfter > 0 && retryAfter <= 60);
    assert.equal(res.headers['x-ratelimit-limit'], '3');
    assert.equal(res.headers['x-ratelimit-remaining'], '0');
    assert.equal(res.headers['x-ratelimit-reset'], String(retryAfter));
    const list = await t.app.inject({ method: 'GET', url: '/v1/rates' });
    assert.equal(list.statusCode, 429, 'the list and single-country endpoints share the budget');
    const other = await t.app.inject({ method: 'GET', url: '/v1/rates/de', remoteAddress: '10.1.2.3' });
    assert.equal(other.statusCode, 200, 'another IP has its own budget');
  });
});
