import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { TEST_MAGIC_NUMBERS } from '../../src/modules/validation/test-answers.js';
import { buildTestApp, isUuidV7, type TestApp, type TestKey } from '../helpers/app.js';

const DATA_FIELDS = ['company', 'country', 'valid', 'vat_number', 'verified_at', 'verify_id'];

describe('GET /v1/validate with a test key', () => {
  let t: TestApp;
  let key: TestKey;
  let free: TestKey;
  const clock = createManualClock('2026-11-22T12:00:00.000Z');
  let networkCalls = 0;

  before(async () => {
    // Live registries that count calls: test mode must never reach them.
    const counting = {
      source: 'vies' as const,
      countries: [],
      lookup: async () => {
        networkCalls += 1;
        throw new Error('test mode must not call a registry');
      },
    };
    t = await buildTestApp(
      {},
      {
        clock,
        registries: {
          clientForPrefix: () => counting,
          viesStatus: { checkStatus: async () => null },
        },
      },
    );
    key = await t.key('business', 'test');
    free = await t.key('free', 'test');
  });
  after(() => t.close());

  const get = (url: string, headers = key.headers) => t.app.inject({ method: 'GET', url, headers });

  it('answers a well-formed number with every field of the response', async () => {
    const res = await get('/v1/validate?vat_number=DE100000008');
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body.data).sort(), DATA_FIELDS);
    assert.equal(body.data.valid, true);
    assert.equal(body.data.vat_number, 'DE100000008');
    assert.deepEqual(body.data.company, {
      name: 'Testfirma Muster GmbH',
      address: 'Teststraße 1\n10115 Berlin',
    });
    assert.equal(body.data.country.code, 'DE');
    assert.equal(body.data.country.name, 'Germany');
    assert.equal(body.data.country.vat.standard_rate, 19);
    assert.deepEqual(body.data.country.vat.reduced_rates, [7]);
    assert.equal(body.data.country.vat.currency, 'EUR');
    assert.equal(body.data.country.vat.name, 'Umsatzsteuer');
    assert.equal(body.data.country.vat.abbreviation, 'USt');
    assert.match(body.data.vat_number, new RegExp(body.data.country.vat.number_pattern));
    assert.equal(typeof body.data.country.vat.number_format, 'string');
    assert.match(body.data.country.vat.updated_at, /^\d{4}-\d{2}-\d{2}$/);
    assert.equal(body.data.verify_id, null);
    assert.equal(body.data.verified_at, '2026-11-22T12:00:00.000Z');
    assert.ok(isUuidV7(body.meta.request_id));
    assert.equal(typeof body.meta.latency_ms, 'number');
    assert.ok(Number.isInteger(body.meta.latency_ms));
    assert.equal(body.meta.cached, false);
    // The registry a live key would get the answer from, as for live keys.
    assert.equal(body.meta.source, 'vies');
    assert.equal(body.meta.source_status, 'live');
    assert.equal(body.meta.cached_at, null);
    assert.equal(body.meta.stale_seconds, null);
    assert.equal(res.headers['service-request-id'], body.meta.request_id);
    assert.equal(
      res.headers['x-request-id'],
      body.meta.request_id,
      "X-Request-Id, read by the hosted API's clients",
    );
  });

  it('normalises the ways people write numbers', async () => {
    for (const [input, normalised, code] of [
      ['de 100.000.008', 'DE100000008', 'DE'],
      ['(DE)-100000008', 'DE100000008', 'DE'],
      ['GR 094259216', 'EL094259216', 'GR'],
      ['CHE-116.281.710 MWST', 'CHE116281710', 'CH'],
      ['NO 923 609 016 MVA', 'NO923609016', 'NO'],
    ] as const) {
      const res = await get(`/v1/validate?vat_number=${encodeURIComponent(input)}`);
      assert.equal(res.statusCode, 200, `${input}: ${res.body}`);
      assert.equal(res.json().data.vat_number, normalised);
      assert.equal(res.json().data.country.code, code);
    }
  });

  it('answers each magic number as documented', async () => {
    const byVat = Object.fromEntries(TEST_MAGIC_NUMBERS.map((m) => [m.behaviour, m.vat]));
    const noCompany = (await get(`/v1/validate?vat_number=${byVat.valid_without_company}`)).json();
    assert.equal(noCompany.data.valid, true);
    assert.equal(noCompany.data.company, null);

    const invalid = (await get(`/v1/validate?vat_number=${byVat.invalid}`)).json();
    assert.equal(invalid.data.valid, false);
    assert.equal(invalid.data.company, null);

    const down = await get(`/v1/validate?vat_number=${byVat.registry_down}`);
    assert.equal(down.statusCode, 502);
    assert.equal(down.json().error.code, 'registry_unavailable');
    assert.ok(Number(down.headers['retry-after']) > 0);

    const throttled = await get(`/v1/validate?vat_number=${byVat.registry_throttled}`);
    assert.equal(throttled.statusCode, 502);
    assert.match(throttled.json().error.message, /MS_MAX_CONCURRENT_REQ/);
    assert.ok(Number(throttled.headers['retry-after']) > 0);

    const stale = (await get(`/v1/validate?vat_number=${byVat.registry_down_stale}`)).json();
    assert.equal(stale.data.valid, true);
    assert.equal(stale.meta.source_status, 'degraded');
    assert.equal(stale.meta.cached, true);
    assert.equal(stale.meta.cached_at, '2026-10-22T12:00:00.000Z');
    assert.equal(stale.meta.stale_seconds, 31 * 86_400);

    const cached = (await get(`/v1/validate?vat_number=${byVat.cached}`)).json();
    assert.equal(cached.meta.source_status, 'cached');
    assert.equal(cached.meta.cached, true);
    assert.equal(cached.meta.stale_seconds, 3600);
    const forced = (await get(`/v1/validate?vat_number=${byVat.cached}&cache=false`)).json();
    assert.equal(forced.meta.source_status, 'live');

    const limited = await get(`/v1/validate?vat_number=${byVat.rate_limited}`);
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().error.code, 'rate_limited');
    assert.ok(Number(limited.headers['retry-after']) > 0);
  });

  it('gives a deterministic consultation number when a requester is given', async () => {
    const a = (await get('/v1/validate?vat_number=FR40303265045&requester_vat_number=DE136695976')).json();
    const b = (await get('/v1/validate?vat_number=FR40303265045&requester_vat_number=DE136695976')).json();
    assert.match(a.data.verify_id, /^TEST[0-9A-F]{12}$/);
    assert.equal(a.data.verify_id, b.data.verify_id);
    const other = (
      await get('/v1/validate?vat_number=FR40303265045&requester_vat_number=ATU13585627')
    ).json();
    assert.notEqual(other.data.verify_id, a.data.verify_id);
  });

  it('any other well-formed number is valid with placeholder company data', async () => {
    const body = (await get('/v1/validate?vat_number=IE6388047V')).json();
    assert.equal(body.data.valid, true);
    assert.equal(body.data.company.name, 'Test Company IE6388047V');
  });

  it('400 invalid_format with the reason, before anything else', async () => {
    const cases: Array<[string, string]> = [
      ['DE136695977', 'checksum'],
      ['DE12345678', 'length'],
      ['DE12345678X', 'characters'],
      ['123456789', 'country'],
      ['', 'country'],
    ];
    for (const [input, reason] of cases) {
      const res = await get(`/v1/validate?vat_number=${encodeURIComponent(input)}`);
      if (input === '') {
        assert.equal(res.statusCode, 400);
        continue;
      }
      assert.equal(res.statusCode, 400, input);
      const body = res.json();
      assert.equal(body.error.code, 'invalid_format', input);
      assert.equal(body.error.details.reason, reason, input);
    }
    const badRequester = await get('/v1/validate?vat_number=DE100000008&requester_vat_number=DE136695977');
    assert.equal(badRequester.statusCode, 400);
    assert.match(badRequester.json().error.message, /requester_vat_number/);
  });

  it('400 country_unsupported for a country without a registry', async () => {
    const res = await get('/v1/validate?vat_number=US123456789');
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error.code, 'country_unsupported');
  });

  it('ignores unknown parameters', async () => {
    const res = await get('/v1/validate?vat_number=DE100000008&foo=bar');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().data.vat_number, 'DE100000008');
  });

  it('400 for missing, oversized and injection-laden parameters', async () => {
    for (const url of [
      '/v1/validate',
      '/v1/validate?vat_number=DE100000008&cache=maybe',
      `/v1/validate?vat_number=${'1'.repeat(300)}`,
      "/v1/validate?vat_number=DE100000008'%3B%20DROP%20TABLE%20api_keys%3B--",
      '/v1/validate?vat_number=%3Cscript%3Ealert(1)%3C%2Fscript%3E',
      '/v1/validate?vat_number=%FF%FE',
    ]) {
      const res = await get(url);
      assert.equal(res.statusCode, 400, url);
      assert.ok(['invalid_format', 'country_unsupported'].includes(res.json().error.code), url);
    }
    // Nothing was stored by the refused calls and the keys table is intact.
    assert.ok((await t.container.keys.countKeys()) >= 2);
  });

  it('401 without a key; a Free key may validate', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/validate?vat_number=DE100000008' });
    assert.equal(res.statusCode, 401);
    assert.equal((await get('/v1/validate?vat_number=DE100000008', free.headers)).statusCode, 200);
  });

  it('answers the national-register numbers as documented, as while VIES is down', async () => {
    const byVat = Object.fromEntries(TEST_MAGIC_NUMBERS.map((m) => [m.behaviour, m.vat]));
    const registered = await get(
      `/v1/validate?vat_number=${byVat.fallback_registered}&company_name=${encodeURIComponent(`Test Company ${byVat.fallback_registered}`)}`,
    );
    assert.equal(registered.statusCode, 200, registered.body);
    const body = registered.json();
    assert.equal(body.data.valid, true);
    assert.equal(body.data.registration_scope, 'domestic');
    assert.equal(body.data.verify_id, null);
    assert.equal(body.meta.source, 'pl_whitelist');
    assert.equal(body.meta.source_status, 'fallback');
    assert.equal(body.meta.fallback.reason, 'MS_UNAVAILABLE');
    assert.equal(body.meta.fallback.register_status, 'Czynny');
    assert.match(body.meta.fallback.consultation_number, /^TEST[0-9A-F]{12}$/);
    assert.equal(body.meta.fallback.identifiers.requestId, body.meta.fallback.consultation_number);
    assert.equal(body.data.match.name.result, 'match', 'the claim compares with the register company');
    const again = (await get(`/v1/validate?vat_number=${byVat.fallback_registered}`)).json();
    assert.equal(again.meta.fallback.consultation_number, body.meta.fallback.consultation_number);

    const exempt = (await get(`/v1/validate?vat_number=${byVat.fallback_not_registered}`)).json();
    assert.equal(exempt.data.valid, false);
    assert.equal(exempt.data.company, null);
    assert.equal(exempt.meta.fallback.register_status, 'Zwolniony');

    const unreliable = (await get(`/v1/validate?vat_number=${byVat.fallback_unreliable}`)).json();
    assert.equal(unreliable.meta.source, 'cz_adis');
    assert.deepEqual(
      unreliable.meta.fallback.flags.map((f: { code: string }) => f.code),
      ['unreliable_payer'],
    );

    const file = (await get(`/v1/validate?vat_number=${byVat.fallback_file}`)).json();
    assert.equal(file.meta.source, 'si_furs');
    assert.equal(file.meta.fallback.data_date, '2026-11-21');
    assert.equal(file.meta.fallback.consultation_number, null);
  });

  it('a decision on a test register answer does not reverse-charge', async () => {
    const byVat = Object.fromEntries(TEST_MAGIC_NUMBERS.map((m) => [m.behaviour, m.vat]));
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/decide',
      headers: { ...key.headers, 'content-type': 'application/json' },
      payload: { seller_vat: 'DE100000008', buyer_vat: byVat.fallback_registered, supply_type: 'services' },
    });
    assert.equal(res.json().error?.code, 'registry_unavailable', res.body);
    assert.equal(res.json().error.details.register.source, 'pl_whitelist');
  });

  it('never calls a registry and never emits events', async () => {
    assert.equal(networkCalls, 0);
    const events = await t.container.db.kysely.selectFrom('events').selectAll().execute();
    assert.equal(events.length, 0);
  });
});
