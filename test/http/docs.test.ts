import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { ERROR_CODES } from '../../src/lib/errors.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

describe('docs, health and readiness', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('GET /openapi.json is a valid OpenAPI 3.1 document generated from the routes', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.match(doc.openapi, /^3\.1\./);
    const validator = new Validator();
    const result = await validator.validate(doc);
    assert.deepEqual(result.errors ?? [], [], JSON.stringify(result.errors, null, 2)?.slice(0, 2000));
    assert.equal(result.valid, true);
    assert.ok(doc.paths['/v1/rates/{country}']?.get, 'rates route documented');
    assert.ok(doc.paths['/health']?.get);
  });

  it('GET /docs serves the interactive reference', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs' });
    assert.ok([200, 302].includes(res.statusCode));
    const page =
      res.statusCode === 302 ? await t.app.inject({ method: 'GET', url: String(res.headers.location) }) : res;
    const html =
      page.statusCode === 200 ? page.body : (await t.app.inject({ method: 'GET', url: '/docs/' })).body;
    assert.match(html, /swagger/i);
  });

  it('GET /health → {"ok": true}', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { ok: true });
  });

  it('GET /ready checks the database', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/ready' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().ok, true);
  });
});

describe('readiness with a dead database', () => {
  it('GET /ready → 503 when the database does not answer', async () => {
    const t = await buildTestApp();
    await t.container.db.close();
    const res = await t.app.inject({ method: 'GET', url: '/ready' });
    assert.equal(res.statusCode, 503);
    assert.equal(res.json().ok, false);
    await t.app.close();
  });
});

// CommonJS packages: their default export is the module object under ESM interop.
const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule;

describe('the OpenAPI document describes exactly what is sent', () => {
  let t: TestApp;
  let doc: {
    paths: Record<
      string,
      Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>
    >;
    components: object;
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);

  before(async () => {
    t = await buildTestApp();
    doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  });
  after(() => t.close());

  /** Checks a response body against the document's schema for its path, method and status; closes objects. */
  function described(res: LightMyRequestResponse, path: string, method: string) {
    const responses = doc.paths[path]?.[method]?.responses ?? {};
    const status = String(res.statusCode);
    const entry = responses[status] ?? responses[`${status[0]}XX`] ?? responses[`${status[0]}xx`];
    const schema = entry?.content?.['application/json']?.schema;
    assert.ok(schema, `${method} ${path} documents ${status}`);
    const validate = ajv.compile({ ...closed(schema), components: closed(doc.components) });
    const body = res.json();
    assert.equal(
      validate(body),
      true,
      `${method} ${path} ${status}: ${JSON.stringify(validate.errors)?.slice(0, 800)}`,
    );
  }

  /** The schema with every object that lists its properties closed: an undocumented field fails. */
  function closed(schema: unknown): Record<string, unknown> {
    if (Array.isArray(schema)) return schema.map(closed) as unknown as Record<string, unknown>;
    if (!schema || typeof schema !== 'object') return schema as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(schema)) out[k] = closed(v);
    if (out.type === 'object' && out.properties && out.additionalProperties === undefined) {
      out.additionalProperties = false;
    }
    return out;
  }

  it('for the answers written by hand (rates, confirmation records, errors) and the serialised ones', async () => {
    const business = await t.key('business', 'test', { defaultRequesterVat: 'DE136695976' });
    const pro = await t.key('pro');
    const get = (url: string, headers = {}) => t.app.inject({ method: 'GET', url, headers });
    const post = (url: string, payload: object, headers = {}) =>
      t.app.inject({ method: 'POST', url, headers, payload });

    described(await get('/v1/rates'), '/v1/rates', 'get');
    described(await get('/v1/rates/de'), '/v1/rates/{country}', 'get');
    described(await get('/v1/rates/zz'), '/v1/rates/{country}', 'get');
    described(await get('/v1/validate?vat_number=DE100000008', pro.headers), '/v1/validate', 'get');
    described(await get('/v1/validate?vat_number=DE700000001', pro.headers), '/v1/validate', 'get');
    described(await get('/v1/validate?vat_number=DE400000000', pro.headers), '/v1/validate', 'get');
    described(
      await post('/v1/decide', { seller_vat: 'DE100000008', buyer_vat: 'FR40303265045' }, pro.headers),
      '/v1/decide',
      'post',
    );
    described(
      await post('/v1/validate/batch', { vat_numbers: ['DE100000008', 'DE1'] }, pro.headers),
      '/v1/validate/batch',
      'post',
    );
    const confirmed = await post(
      '/v1/confirm',
      { vat_number: 'ATU12345678', company: { name: 'Muster GmbH', town: 'Wien' } },
      business.headers,
    );
    described(confirmed, '/v1/confirm', 'post');
    described(
      await get(`/v1/confirmations/${confirmed.json().data.confirmation_id}`, business.headers),
      '/v1/confirmations/{id}',
      'get',
    );
  });

  it("names only the closed list of error codes, and the hosted contract's integer latency", () => {
    interface Node {
      properties: Record<string, Node>;
      anyOf?: { const?: string; enum?: string[] }[];
      type?: string;
    }
    const envelope = (doc.components as { schemas: { ErrorEnvelope: Node } }).schemas.ErrorEnvelope;
    const codes = envelope.properties.error?.properties.code?.anyOf ?? [];
    const listed = codes.map((c) => c.const ?? c.enum?.[0]);
    assert.ok(!listed.includes('invalid_request'));
    assert.deepEqual(listed, [...ERROR_CODES]);
    assert.equal(envelope.properties.meta?.properties.latency_ms?.type, 'integer');
  });
});
