import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
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

  it('GET /docs serves the reference from the package, named and versioned, with no https upgrade', async () => {
    const redirect = await t.app.inject({ method: 'GET', url: '/docs' });
    assert.equal(redirect.statusCode, 301);
    assert.equal(redirect.headers.location, '/docs/');
    const page = await t.app.inject({ method: 'GET', url: '/docs/' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<title>openvat 0\.1\.0 API reference<\/title>/);
    assert.match(page.body, /<script src="js\/scalar\.js"><\/script>/);
    assert.doesNotMatch(page.body, /https?:\/\/(?!www\.w3\.org)/, 'no asset from another host');
    const csp = String(page.headers['content-security-policy']);
    assert.doesNotMatch(csp, /upgrade-insecure-requests/);
    assert.match(csp, /script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
    assert.match(csp, /connect-src 'self'/);
    const script = await t.app.inject({ method: 'GET', url: '/docs/js/scalar.js' });
    assert.equal(script.statusCode, 200);
    assert.match(String(script.headers['content-type']), /javascript/);
    assert.ok(script.body.length > 100_000);
  });

  it('GET /docs/js/scalar.js is sent gzip-compressed to a client that accepts it, with an entity tag the next request revalidates', async () => {
    const plain = await t.app.inject({ method: 'GET', url: '/docs/js/scalar.js' });
    const zipped = await t.app.inject({
      method: 'GET',
      url: '/docs/js/scalar.js',
      headers: { 'accept-encoding': 'gzip, deflate, br' },
    });
    assert.equal(zipped.statusCode, 200);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.ok(zipped.rawPayload.length < plain.rawPayload.length / 2);
    assert.equal(gunzipSync(zipped.rawPayload).toString('utf8'), plain.body);
    assert.match(String(plain.headers['cache-control']), /max-age=\d+/);
    const etag = String(zipped.headers.etag);
    assert.equal(plain.headers.etag, etag);
    const again = await t.app.inject({
      method: 'GET',
      url: '/admin/docs/js/scalar.js',
      headers: { 'if-none-match': etag },
    });
    assert.equal(again.statusCode, 304);
    assert.equal(again.rawPayload.length, 0);
  });

  it('GET / redirects to /docs', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/' });
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, '/docs/');
  });

  it('the document carries the package version, real error examples and a plain `cache` enum', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.equal(doc.info.version, '0.1.0');
    const validate = doc.paths['/v1/validate'].get;
    const cache = validate.parameters.find((p: { name: string }) => p.name === 'cache');
    assert.deepEqual(cache.schema, { type: 'string', enum: ['true', 'false'] });
    const clientErrors = validate.responses['4XX'].content['application/json'].examples;
    assert.equal(clientErrors.unauthorized.value.error.code, 'unauthorized');
    assert.equal(clientErrors.rate_limited.summary, '429 rate_limited');
    assert.doesNotMatch(JSON.stringify(clientErrors), /additionalProp/);
    const serverErrors = validate.responses['5XX'].content['application/json'].examples;
    assert.equal(serverErrors.registry_unavailable.value.error.code, 'registry_unavailable');
    // The cache parameter still accepts exactly "true" and "false".
    const key = await t.key('free');
    const bad = await t.app.inject({
      method: 'GET',
      url: '/v1/validate?vat_number=DE100000008&cache=no',
      headers: key.headers,
    });
    assert.equal(bad.statusCode, 400);
    const ok = await t.app.inject({
      method: 'GET',
      url: '/v1/validate?vat_number=DE100000008&cache=false',
      headers: key.headers,
    });
    assert.equal(ok.statusCode, 200);
  });

  it('GET /health → {"ok": true}', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { ok: true });
  });

  it("GET /health and the OpenAPI document name package.json's version", async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const health = await t.app.inject({ method: 'GET', url: '/health' });
    assert.equal(health.headers['openvat-version'], version);
    assert.deepEqual(health.json(), { ok: true }, "the body stays the hosted API's");
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.equal(doc.info.version, version);
    assert.ok(
      doc.paths['/health'].get.responses['200'].headers['openvat-version'],
      'the header is documented',
    );
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

  it('shows error examples as the API sends them: named by their code, with an integer latency', () => {
    type Example = { value: { error?: { code: string }; meta?: { latency_ms?: unknown } } };
    type Responses = Record<string, { content?: Record<string, { examples?: Record<string, Example> }> }>;
    const seen: string[] = [];
    for (const operations of Object.values(
      doc.paths as Record<string, Record<string, { responses?: Responses }>>,
    )) {
      for (const operation of Object.values(operations)) {
        for (const response of Object.values(operation.responses ?? {})) {
          for (const media of Object.values(response.content ?? {})) {
            for (const [name, example] of Object.entries(media.examples ?? {})) {
              if (!example.value.error) continue;
              seen.push(name);
              assert.equal(
                name,
                example.value.error.code,
                `example "${name}" shows ${example.value.error.code}`,
              );
              assert.ok(ERROR_CODES.includes(example.value.error.code as never), example.value.error.code);
              assert.ok(
                Number.isInteger(example.value.meta?.latency_ms),
                `${name}: latency_ms is an integer`,
              );
            }
          }
        }
      }
    }
    assert.ok(seen.includes('invalid_format') && seen.includes('registry_unavailable'), seen.join(', '));
  });
});
