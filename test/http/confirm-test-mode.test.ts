import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import type { EvatrClient } from '../../src/registries/evatr.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';

const REQUESTER = 'DE136695976';
const FULL = { name: 'Beispiel GmbH', street: 'Hauptstrasse 1', postcode: '1010', town: 'Wien' };

/** Test keys answer from the magic-number table (docs/confirmations.md, "Test mode") and never call out. */
describe('POST /v1/confirm with a test key', () => {
  let t: TestApp;
  let key: TestKey;
  let liveCalls = 0;
  const clock = createManualClock('2026-11-22T10:00:00.000Z');

  before(async () => {
    const forbidden: EvatrClient = {
      async confirm() {
        liveCalls++;
        throw new Error('test keys must not reach the live eVatR client');
      },
    };
    t = await buildTestApp({ OPENVAT_CONFIRM_BURST: '1000' }, { evatr: forbidden, clock });
    key = await t.key('business', 'test', { defaultRequesterVat: REQUESTER });
  });
  after(() => t.close());

  async function confirm(vat: string, company: Record<string, string> = FULL) {
    return t.app.inject({
      method: 'POST',
      url: '/v1/confirm',
      headers: key.headers,
      payload: { vat_number: vat, company },
    });
  }

  const OK: { vat: string; valid: boolean; qualified: boolean; matches: string; code: string }[] = [
    { vat: 'ATU12345678', valid: true, qualified: true, matches: 'AAAA', code: 'taxauth-0000' },
    { vat: 'FR40303265045', valid: true, qualified: true, matches: 'AAAA', code: 'taxauth-0000' },
    { vat: 'ATU88881111', valid: true, qualified: false, matches: 'ABBA', code: 'taxauth-0000' },
    { vat: 'ATU88882222', valid: true, qualified: false, matches: 'ADDA', code: 'taxauth-0000' },
    { vat: 'ATU99992001', valid: false, qualified: false, matches: 'CCCC', code: 'taxauth-2001' },
    { vat: 'ATU99992002', valid: false, qualified: false, matches: 'CCCC', code: 'taxauth-2002' },
    { vat: 'ATU99992006', valid: false, qualified: false, matches: 'CCCC', code: 'taxauth-2006' },
    { vat: 'ATU99992008', valid: true, qualified: false, matches: 'CCCC', code: 'taxauth-2008' },
  ];
  for (const c of OK) {
    it(`${c.vat} → 200 ${c.code}, valid ${c.valid}, qualified ${c.qualified}, ${c.matches}`, async () => {
      const res = await confirm(c.vat);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.data.valid, c.valid);
      assert.equal(body.data.qualified, c.qualified);
      const m = body.data.matches;
      assert.equal(`${m.name}${m.street}${m.postcode}${m.town}`, c.matches);
      assert.equal(body.meta.taxauth_status_code, c.code);
      assert.equal(body.meta.source, 'taxauth');
      assert.equal(body.data.confirmed_at, '2026-11-22T10:00:00.000Z');
      if (c.code === 'taxauth-2002') {
        assert.equal(body.data.valid_from, '2026-12-22');
        assert.equal(body.data.valid_to, null);
      }
      if (c.code === 'taxauth-2006') {
        assert.equal(body.data.valid_from, '2021-01-01');
        assert.equal(body.data.valid_to, '2025-12-31');
      }
    });
  }

  it('without company.town the authority only makes a simple check: taxauth-0003, valid, not qualified', async () => {
    const res = await confirm('ATU12345678', { name: 'Beispiel GmbH' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().meta.taxauth_status_code, 'taxauth-0003');
    assert.equal(res.json().data.valid, true);
    assert.equal(res.json().data.qualified, false);
  });

  const ERRORS: { vat: string; status: number; code: string; taxauth?: string; retryAfter?: boolean }[] = [
    { vat: 'ATU99990004', status: 422, code: 'invalid_requester_vat', taxauth: 'taxauth-0004' },
    { vat: 'ATU99992005', status: 422, code: 'invalid_requester_vat', taxauth: 'taxauth-2005' },
    { vat: 'ATU99990005', status: 400, code: 'taxauth_rejected', taxauth: 'taxauth-0005' },
    {
      vat: 'ATU99990008',
      status: 429,
      code: 'taxauth_session_limit',
      taxauth: 'taxauth-0008',
      retryAfter: true,
    },
    {
      vat: 'ATU99990011',
      status: 503,
      code: 'taxauth_unavailable',
      taxauth: 'taxauth-0011',
      retryAfter: true,
    },
    { vat: 'ATU88880502', status: 502, code: 'taxauth_unavailable' },
    { vat: 'ATU88880504', status: 502, code: 'taxauth_unavailable' },
  ];
  for (const c of ERRORS) {
    it(`${c.vat} → ${c.status} ${c.code}`, async () => {
      const res = await confirm(c.vat);
      assert.equal(res.statusCode, c.status, res.body);
      const body = res.json();
      assert.equal(body.error.code, c.code);
      assert.equal(body.error.details?.taxauth_status_code, c.taxauth);
      if (c.retryAfter) assert.ok(Number(res.headers['retry-after']) > 0);
    });
  }

  it('never called the live client, and test confirmations are retrievable', async () => {
    const res = await confirm('ATU12345678');
    const stored = await t.app.inject({
      method: 'GET',
      url: `/v1/confirmations/${res.json().data.confirmation_id}`,
      headers: key.headers,
    });
    assert.equal(stored.statusCode, 200);
    assert.equal(stored.json().data.mode, 'test');
    assert.equal(liveCalls, 0);
  });

  it('the OpenAPI description documents the magic numbers', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const description: string = doc.paths['/v1/confirm'].post.description;
    for (const vat of [
      'ATU88881111',
      'ATU88882222',
      'ATU99992001',
      'ATU99992002',
      'ATU99992006',
      'ATU88880502',
    ]) {
      assert.ok(description.includes(vat), vat);
    }
  });
});

describe('local burst limit on confirmations', () => {
  let t: TestApp;
  const clock = createManualClock('2026-11-22T10:00:00.000Z');

  before(async () => {
    t = await buildTestApp({ OPENVAT_CONFIRM_BURST: '3', OPENVAT_CONFIRM_BURST_WINDOW: '30' }, { clock });
  });
  after(() => t.close());

  it('answers 429 rate_limited with Retry-After once a key used its burst, per key, and refills', async () => {
    const a = await t.key('business', 'test', { defaultRequesterVat: REQUESTER });
    const b = await t.key('business', 'test', { defaultRequesterVat: REQUESTER });
    const send = (k: TestKey) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/confirm',
        headers: k.headers,
        payload: { vat_number: 'ATU12345678', company: FULL },
      });
    for (let i = 0; i < 3; i++) assert.equal((await send(a)).statusCode, 200);
    const limited = await send(a);
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().error.code, 'rate_limited');
    assert.equal(limited.headers['retry-after'], '10');
    assert.equal((await send(b)).statusCode, 200, 'another key has its own bucket');
    clock.advance(10_000);
    assert.equal((await send(a)).statusCode, 200, 'one token back after 10 s');
    assert.equal((await send(a)).statusCode, 429);
  });
});
