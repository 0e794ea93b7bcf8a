import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
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
