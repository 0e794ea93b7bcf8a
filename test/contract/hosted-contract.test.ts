/**
 * A client written for the hosted API keeps working against openvat: every operation the hosted
 * contract shares with openvat, with every status both document, answered through the real HTTP
 * stack with test keys and with live keys against the registry and eVatR simulators, and checked
 * against the hosted shapes of `hosted-schemas.ts`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Static, TSchema } from '@sinclair/typebox';
import { FormatRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { LightMyRequestResponse } from 'fastify';
import { germanVatNumberWithCheckDigit } from '../../src/simulators/evatr.js';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { expectedViesAnswer } from '../../src/simulators/vies.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';
import * as H from './hosted-schemas.js';

// The formats the hosted description uses, checked as a client library would.
FormatRegistry.Set('uuid', (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v));
FormatRegistry.Set(
  'date-time',
  (v) =>
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) &&
    !Number.isNaN(Date.parse(v)),
);
FormatRegistry.Set('uri', (v) => URL.canParse(v));

/** Asserts the status and that the body satisfies the hosted schema; returns the body. */
function conforms<T extends TSchema>(res: LightMyRequestResponse, status: number, schema: T): Static<T> {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json();
  const problems = [...Value.Errors(schema, body)].map((e) => `${e.path}: ${e.message}`);
  assert.deepEqual(problems, [], `${res.body.slice(0, 600)}`);
  return body;
}

/** An error answer: the hosted envelope, its code, and `Retry-After` where the status calls for it. */
function fails(
  res: LightMyRequestResponse,
  status: number,
  code: string,
  schema: typeof H.ErrorEnvelope | typeof H.ConfirmErrorEnvelope = H.ErrorEnvelope,
): { error: { code: string; message: string } } {
  const body = conforms(res, status, schema as typeof H.ErrorEnvelope);
  assert.equal(body.error.code, code);
  if (status === 429 || status === 503 || code === 'registry_unavailable') {
    assert.match(String(res.headers['retry-after']), /^\d+$/);
  }
  return body;
}

/** German numbers the VIES simulator registers (or not). */
function germanNumbers(count: number, registered: boolean): string[] {
  const out: string[] = [];
  for (let i = 1; out.length < count; i++) {
    const vat = germanVatNumberWithCheckDigit(String(31_000_000 + i));
    const expected = expectedViesAnswer('DE', vat.slice(2));
    if ('valid' in expected && expected.valid === registered) out.push(vat);
  }
  return out;
}

const REQUESTER = 'DE136695976';

describe('the hosted contract', () => {
  let sim: SimulatorServer;
  let t: TestApp;
  let receiver: WebhookReceiver;
  const keys = {} as Record<
    'free' | 'starter' | 'pro' | 'business' | 'livePro' | 'liveBusiness' | 'webhooks',
    TestKey
  >;

  before(async () => {
    sim = createSimulatorServer({ latencyMs: 1 });
    const { urls } = await sim.listen(0, '127.0.0.1');
    t = await buildTestApp({
      ...urls,
      OPENVAT_WEBHOOKS_ALLOW_PRIVATE: 'true',
      OPENVAT_CONFIRM_BURST: '1000',
      OPENVAT_REGISTRY_BACKOFF_MS: '1',
      OPENVAT_REGISTRY_DEADLINE_MS: '200',
    });
    receiver = await startWebhookReceiver();
    keys.free = await t.key('free');
    keys.starter = await t.key('starter');
    keys.pro = await t.key('pro');
    keys.business = await t.key('business', 'test', { defaultRequesterVat: REQUESTER });
    keys.webhooks = await t.key('pro');
    keys.livePro = await t.key('pro', 'live');
    keys.liveBusiness = await t.key('business', 'live', { defaultRequesterVat: REQUESTER });
  });
  after(async () => {
    await t.close();
    await receiver.close();
    await sim.close();
  });

  const get = (url: string, key?: TestKey, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url, headers: { ...(key ? key.headers : {}), ...headers } });
  const post = (url: string, payload: unknown, key?: TestKey) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: key ? key.headers : {},
      payload: payload as Record<string, unknown>,
    });

  it('GET /health', async () => {
    conforms(await get('/health'), 200, H.Health);
  });

  describe('GET /v1/validate', () => {
    it('200 with test keys, for every registry and every magic answer', async () => {
      const sources: Record<string, string> = {};
      for (const vat of [
        'DE100000008',
        'DE200000005',
        'DE300000002',
        'DE500000007',
        'DE700000001',
        'GB980780684',
        'CHE116281710',
        'NO923609016',
        'XI980780684',
      ]) {
        const body = conforms(await get(`/v1/validate?vat_number=${vat}`, keys.pro), 200, H.ValidateResponse);
        sources[vat] = body.meta.source;
      }
      assert.equal(sources.GB980780684, 'hmrc');
      assert.equal(sources.CHE116281710, 'bfs');
      assert.equal(sources.NO923609016, 'brreg');
      const verified = conforms(
        await get(`/v1/validate?vat_number=FR40303265045&requester_vat_number=${REQUESTER}`, keys.pro),
        200,
        H.ValidateResponse,
      );
      assert.ok(verified.data.verify_id);
    });

    it('200 with a live key: live, then cached, and an unregistered number', async () => {
      const [registered] = germanNumbers(1, true);
      const [unregistered] = germanNumbers(1, false);
      const first = conforms(
        await get(`/v1/validate?vat_number=${registered}`, keys.livePro),
        200,
        H.ValidateResponse,
      );
      assert.equal(first.meta.source_status, 'live');
      const again = conforms(
        await get(`/v1/validate?vat_number=${registered}`, keys.livePro),
        200,
        H.ValidateResponse,
      );
      assert.equal(again.meta.source_status, 'cached');
      const invalid = conforms(
        await get(`/v1/validate?vat_number=${unregistered}`, keys.livePro),
        200,
        H.ValidateResponse,
      );
      assert.equal(invalid.data.valid, false);
    });

    it('ignores unknown query parameters, as the hosted API does', async () => {
      conforms(await get('/v1/validate?vat_number=DE100000008&lang=de', keys.pro), 200, H.ValidateResponse);
    });

    it('400 invalid_format for malformed input (missing, malformed, over-long), country_unsupported', async () => {
      fails(await get('/v1/validate', keys.pro), 400, 'invalid_format');
      fails(await get('/v1/validate?vat_number=DE12345', keys.pro), 400, 'invalid_format');
      fails(await get(`/v1/validate?vat_number=DE${'1'.repeat(300)}`, keys.pro), 400, 'invalid_format');
      fails(await get('/v1/validate?vat_number=US123456789', keys.pro), 400, 'country_unsupported');
    });

    it('400 invalid_format when the registry refuses the requester (the caller must fix it)', async () => {
      const [registered] = germanNumbers(1, true);
      const [unknownRequester] = germanNumbers(2, false).slice(1);
      const body = fails(
        await get(
          `/v1/validate?vat_number=${registered}&requester_vat_number=${unknownRequester}`,
          keys.livePro,
        ),
        400,
        'invalid_format',
      );
      assert.match(body.error.message, /requester/);
    });

    it('401 without a key or with an unknown one', async () => {
      fails(await get('/v1/validate?vat_number=DE100000008'), 401, 'unauthorized');
      fails(
        await get('/v1/validate?vat_number=DE100000008', undefined, {
          authorization: 'Bearer svc_test_unknown',
        }),
        401,
        'unauthorized',
      );
    });

    it('429 rate_limited with Retry-After', async () => {
      fails(await get('/v1/validate?vat_number=DE800000009', keys.pro), 429, 'rate_limited');
    });

    it('502 registry_unavailable with Retry-After: test magic number and a live registry that is down', async () => {
      fails(await get('/v1/validate?vat_number=DE400000000', keys.pro), 502, 'registry_unavailable');
      const [registered] = germanNumbers(3, true).slice(2);
      sim.control({ down: ['DE'] });
      try {
        fails(await get(`/v1/validate?vat_number=${registered}`, keys.livePro), 502, 'registry_unavailable');
      } finally {
        sim.control({ reset: true });
        sim.control({ latencyMs: 1 });
      }
    });
  });

  describe('POST /v1/validate/batch', () => {
    it('200 with test and live keys; unknown fields ignored; a bad item fails alone', async () => {
      const body = conforms(
        await post(
          '/v1/validate/batch',
          {
            vat_numbers: [
              'DE100000008',
              'DE123',
              'US123456789',
              'DE400000000',
              'DE800000009',
              'D'.repeat(300),
            ],
            note: 'ignored',
          },
          keys.pro,
        ),
        200,
        H.BatchResponse,
      );
      assert.deepEqual(body.data.summary, { total: 6, successful: 1, failed: 5 });
      const numbers = germanNumbers(2, true);
      conforms(
        await post('/v1/validate/batch', { vat_numbers: numbers }, keys.livePro),
        200,
        H.BatchResponse,
      );
    });

    it('400 for an empty list and batch_too_large; 401; 402 below Pro', async () => {
      fails(await post('/v1/validate/batch', { vat_numbers: [] }, keys.pro), 400, 'invalid_format');
      fails(
        await post('/v1/validate/batch', { vat_numbers: Array(101).fill('DE100000008') }, keys.pro),
        400,
        'batch_too_large',
      );
      fails(await post('/v1/validate/batch', { vat_numbers: ['DE100000008'] }), 401, 'unauthorized');
      fails(
        await post('/v1/validate/batch', { vat_numbers: ['DE100000008'] }, keys.starter),
        402,
        'plan_required',
      );
    });
  });

  describe('POST /v1/decide', () => {
    it('200 with test and live keys: reverse charge, a domestic sale without a note, an unregistered buyer', async () => {
      const reverse = conforms(
        await post('/v1/decide', { seller_vat: 'DE100000008', buyer_vat: 'FR40303265045' }, keys.pro),
        200,
        H.DecideResponse,
      );
      assert.notEqual(reverse.data.invoice_note, '');
      const domestic = conforms(
        await post('/v1/decide', { seller_vat: 'DE100000008', buyer_vat: 'DE200000005' }, keys.pro),
        200,
        H.DecideResponse,
      );
      assert.equal(domestic.data.invoice_note, '');
      conforms(
        await post('/v1/decide', { seller_vat: 'FR40303265045', buyer_vat: 'DE300000002' }, keys.pro),
        200,
        H.DecideResponse,
      );
      const [seller, buyer] = germanNumbers(2, true);
      const live = conforms(
        await post('/v1/decide', { seller_vat: 'FR40303265045', buyer_vat: buyer }, keys.livePro),
        200,
        H.DecideResponse,
      );
      assert.equal(live.meta.sources.length, 2);
      conforms(
        await post('/v1/decide', { seller_vat: seller, buyer_vat: 'FR40303265045' }, keys.livePro),
        200,
        H.DecideResponse,
      );
    });

    it('400 invalid_format and seller_country_unsupported; 401; 402 for Free; 429', async () => {
      fails(await post('/v1/decide', { seller_vat: 'DE100000008' }, keys.pro), 400, 'invalid_format');
      fails(
        await post('/v1/decide', { seller_vat: 'DE100000008', buyer_vat: 'FR1' }, keys.pro),
        400,
        'invalid_format',
      );
      fails(
        await post('/v1/decide', { seller_vat: 'GB980780684', buyer_vat: 'FR40303265045' }, keys.pro),
        400,
        'seller_country_unsupported',
      );
      fails(
        await post('/v1/decide', { seller_vat: 'DE100000008', buyer_vat: 'FR40303265045' }),
        401,
        'unauthorized',
      );
      fails(
        await post('/v1/decide', { seller_vat: 'DE100000008', buyer_vat: 'FR40303265045' }, keys.free),
        402,
        'plan_required',
      );
      fails(
        await post('/v1/decide', { seller_vat: 'FR40303265045', buyer_vat: 'DE800000009' }, keys.pro),
        429,
        'rate_limited',
      );
    });
  });

  describe('GET /v1/rates and /v1/rates/{country}', () => {
    it('200 with meta.count, 304 on If-None-Match, 400 and 404', async () => {
      const list = await get('/v1/rates');
      const body = conforms(list, 200, H.RatesListResponse);
      assert.equal(body.meta.count, body.data.length);
      assert.equal(
        (await get('/v1/rates', undefined, { 'if-none-match': String(list.headers.etag) })).statusCode,
        304,
      );
      const one = await get('/v1/rates/DE');
      conforms(one, 200, H.RatesSingleResponse);
      assert.equal(
        (await get('/v1/rates/de', undefined, { 'if-none-match': String(one.headers.etag) })).statusCode,
        304,
      );
      fails(await get('/v1/rates/deu'), 400, 'invalid_format');
      fails(await get('/v1/rates/zz'), 404, 'not_found');
    });

    it('429 rate_limited with Retry-After past the per-IP limit', async () => {
      const small = await buildTestApp({ OPENVAT_PUBLIC_RATE_LIMIT: '1' });
      try {
        const call = () => small.app.inject({ method: 'GET', url: '/v1/rates', remoteAddress: '192.0.2.77' });
        assert.equal((await call()).statusCode, 200);
        fails(await call(), 429, 'rate_limited');
      } finally {
        await small.close();
      }
    });
  });

  describe('GET /v1/audits/{request_id}', () => {
    it('200 for the key that made the call; 401; 404', async () => {
      const call = (await get('/v1/validate?vat_number=DE100000008', keys.pro)).json();
      const audit = conforms(await get(`/v1/audits/${call.meta.request_id}`, keys.pro), 200, H.AuditResponse);
      assert.equal(audit.data.endpoint, 'validate');
      const batch = (await post('/v1/validate/batch', { vat_numbers: ['DE100000008'] }, keys.pro)).json();
      conforms(await get(`/v1/audits/${batch.meta.request_id}`, keys.pro), 200, H.AuditResponse);
      fails(await get(`/v1/audits/${call.meta.request_id}`), 401, 'unauthorized');
      fails(await get(`/v1/audits/${call.meta.request_id}`, keys.starter), 404, 'not_found');
    });
  });

  describe('webhooks', () => {
    it('register 201, list 200, test 200 (integer status, also when unreachable), delete 204', async () => {
      const created = conforms(
        await post('/v1/webhooks', { url: `${receiver.origin}/hook`, description: 'ignored' }, keys.webhooks),
        201,
        H.WebhookCreated,
      );
      conforms(await get('/v1/webhooks', keys.webhooks), 200, H.WebhookList);
      const sent = conforms(
        await post(`/v1/webhooks/${created.id}/test`, undefined, keys.webhooks),
        200,
        H.WebhookTest,
      );
      assert.equal(sent.delivered, true);
      const closed = await startWebhookReceiver();
      await closed.close();
      const gone = conforms(
        await post('/v1/webhooks', { url: `http://127.0.0.1:${closed.port}/gone` }, keys.webhooks),
        201,
        H.WebhookCreated,
      );
      const unreachable = conforms(
        await post(`/v1/webhooks/${gone.id}/test`, undefined, keys.webhooks),
        200,
        H.WebhookTest,
      );
      assert.equal(unreachable.delivered, false);
      for (const id of [created.id, gone.id]) {
        const deleted = await t.app.inject({
          method: 'DELETE',
          url: `/v1/webhooks/${id}`,
          headers: keys.webhooks.headers,
        });
        assert.equal(deleted.statusCode, 204);
      }
    });

    it('400 for a bad URL and webhook_limit_reached; 401; 402 below Pro; 404 for unknown ids', async () => {
      fails(await post('/v1/webhooks', { url: 'not a url' }, keys.pro), 400, 'invalid_format');
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push((await post('/v1/webhooks', { url: `${receiver.origin}/${i}` }, keys.pro)).json().id);
      }
      fails(
        await post('/v1/webhooks', { url: `${receiver.origin}/6` }, keys.pro),
        400,
        'webhook_limit_reached',
      );
      fails(await post('/v1/webhooks', { url: `${receiver.origin}/x` }), 401, 'unauthorized');
      fails(await get('/v1/webhooks'), 401, 'unauthorized');
      fails(await post('/v1/webhooks', { url: `${receiver.origin}/x` }, keys.starter), 402, 'plan_required');
      fails(await get('/v1/webhooks', keys.starter), 402, 'plan_required');
      const unknown = '0190f8ea-a5b2-7000-a123-000000000000';
      fails(
        await t.app.inject({ method: 'DELETE', url: `/v1/webhooks/${unknown}`, headers: keys.pro.headers }),
        404,
        'not_found',
      );
      fails(await post(`/v1/webhooks/${unknown}/test`, undefined, keys.pro), 404, 'not_found');
      fails(
        await t.app.inject({
          method: 'DELETE',
          url: `/v1/webhooks/${ids[0]}`,
          headers: keys.starter.headers,
        }),
        402,
        'plan_required',
      );
    });
  });

  describe('POST /v1/confirm and GET /v1/confirmations/{id} (the hosted SDK)', () => {
    const body = (vat: string, extra: Record<string, unknown> = {}) => ({
      vat_number: vat,
      company: { name: 'Muster GmbH', street: 'Hauptstraße 1', postcode: '1010', town: 'Wien' },
      ...extra,
    });

    it('200 and the stored record, with a test key and a live key against the eVatR simulator', async () => {
      for (const key of [keys.business, keys.liveBusiness]) {
        const confirmed = conforms(
          await post('/v1/confirm', body('ATU12345678'), key),
          200,
          H.ConfirmResponse,
        );
        const record = conforms(
          await get(`/v1/confirmations/${confirmed.data.confirmation_id}`, key),
          200,
          H.ConfirmationDetail,
        );
        assert.equal(record.data.id, confirmed.data.confirmation_id);
        assert.equal(record.data.queried_vat, confirmed.data.vat_number);
        assert.deepEqual(record.data.matches, confirmed.data.matches);
        assert.deepEqual(record.data.result, confirmed.data.company);
      }
    });

    it('every refusal carries a code the hosted SDK knows', async () => {
      const sdk = H.ConfirmErrorEnvelope;
      fails(
        await post(
          '/v1/confirm',
          body('ATU12345678', { requester_vat_number: 'DE136695978' }),
          keys.business,
        ),
        400,
        'invalid_requester_vat',
        sdk,
      );
      fails(await post('/v1/confirm', body('ATU99990005'), keys.business), 400, 'taxauth_rejected', sdk);
      fails(await post('/v1/confirm', body('ATU99990004'), keys.business), 422, 'invalid_requester_vat', sdk);
      fails(await post('/v1/confirm', body('ATU99990008'), keys.business), 429, 'taxauth_session_limit', sdk);
      fails(await post('/v1/confirm', body('ATU99990011'), keys.business), 503, 'taxauth_unavailable', sdk);
      fails(await post('/v1/confirm', body('ATU88880502'), keys.business), 502, 'taxauth_unavailable', sdk);
      fails(await post('/v1/confirm', body('ATU12345678'), keys.pro), 402, 'plan_required', sdk);
      fails(await post('/v1/confirm', body('ATU12345678')), 401, 'unauthorized', sdk);
      fails(
        await get('/v1/confirmations/0190f8ea-a5b2-7000-a123-000000000000', keys.business),
        404,
        'not_found',
        sdk,
      );
    });
  });
});
