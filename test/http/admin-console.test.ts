import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

describe('the admin console and reference', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const get = (url: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url, headers });

  it('serves /admin/ with its scripts and style under a policy that keeps the admin key in the page', async () => {
    const page = await get('/admin/');
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html; charset=utf-8/);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/, 'no inline or foreign script');
    assert.match(csp, /connect-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.doesNotMatch(page.body, /<script>|\son\w+=|<style/i, 'no inline script, handler or style');
    assert.equal((await get('/admin')).body, page.body);
    const assets = [...page.body.matchAll(/(?:src|href)="(\/admin\/[^"]+\.(?:js|css|svg))"/g)].map(
      (m) => m[1] ?? '',
    );
    assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), assets.join());
    for (const asset of assets) {
      const res = await get(asset);
      assert.equal(res.statusCode, 200, asset);
      if (asset.endsWith('.js')) {
        assert.match(String(res.headers['content-type']), /^text\/javascript/);
        assert.doesNotMatch(
          res.body,
          /innerHTML|insertAdjacentHTML|document\.write/,
          `${asset}: no HTML parsing`,
        );
      }
    }
    // Every module the scripts import, and the modules those import (the ones shared with the
    // dashboard under /admin/shared/), is served too, under the same policy.
    const pending = assets.filter((a) => a.endsWith('.js'));
    const seen = new Set(pending);
    while (pending.length > 0) {
      const asset = pending.pop() ?? '';
      const res = await get(asset);
      assert.equal(res.statusCode, 200, asset);
      assert.match(String(res.headers['content-type']), /^text\/javascript/, asset);
      assert.doesNotMatch(
        res.body,
        /innerHTML|insertAdjacentHTML|document\.write/,
        `${asset}: no HTML parsing`,
      );
      for (const [, imported] of res.body.matchAll(/from '(\.\/[\w/-]+\.js)'/g)) {
        const url = new URL(imported ?? '', `http://console${asset}`).pathname;
        if (!seen.has(url)) pending.push(url);
        seen.add(url);
      }
    }
    assert.ok(
      seen.has('/admin/shared/usage-chart.js') && seen.has('/admin/shared/registry-status.js'),
      [...seen].join(),
    );
  });

  it('serves the admin API reference at /admin/docs from /admin/openapi.json, its inline script hashed', async () => {
    const redirect = await get('/admin/docs');
    assert.equal(redirect.statusCode, 301);
    const page = await get('/admin/docs/');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /admin API reference/);
    assert.match(page.body, /\/admin\/openapi\.json/);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
    assert.equal((await get('/admin/docs/js/scalar.js')).statusCode, 200);
    // The public reference keeps its own page and document.
    assert.doesNotMatch((await get('/docs/')).body, /admin\/openapi\.json/);
  });

  it('GET /admin/v1/status answers the registry section of /v1/status, and /admin/v1/me the role', async () => {
    const read = await t.container.admin.createKey('viewer', 'read');
    const headers = { authorization: `Bearer ${read.key}` };
    assert.equal((await get('/admin/v1/status')).statusCode, 401);
    const status = await get('/admin/v1/status', headers);
    assert.equal(status.statusCode, 200, status.body);
    const pub = (await get('/v1/status')).json().data;
    const data = status.json().data;
    assert.deepEqual(Object.keys(data).sort(), Object.keys(pub).sort());
    assert.deepEqual(data.registries, pub.registries);
    assert.equal(data.shared, pub.shared);
    const me = await get('/admin/v1/me', headers);
    assert.equal(me.statusCode, 200, me.body);
    assert.deepEqual(me.json().data, { id: read.summary.id, name: 'viewer', role: 'read' });
    const document = (await get('/admin/openapi.json')).json();
    assert.ok(document.paths['/admin/v1/status']?.get && document.paths['/admin/v1/me']?.get);
  });
});

describe('GET /admin/v1/usage for the console', () => {
  it("counts the requests of a moment ago, as the key's own GET /v1/usage does", async () => {
    const t = await buildTestApp();
    try {
      const key = await t.key('pro');
      const admin = await t.container.admin.createKey('ops', 'admin');
      for (let i = 0; i < 3; i++) {
        await t.app.inject({
          method: 'GET',
          url: '/v1/validate?vat_number=DE100000008',
          headers: key.headers,
        });
      }
      const res = await t.app.inject({
        method: 'GET',
        url: `/admin/v1/usage?account_id=${key.accountId}`,
        headers: { authorization: `Bearer ${admin.key}` },
      });
      assert.equal(res.statusCode, 200, res.body);
      const rows = res.json().data as { operation: string; requests: number }[];
      assert.equal(rows.find((r) => r.operation === 'validate')?.requests, 3, res.body);
    } finally {
      await t.close();
    }
  });
});

describe('the console on a listener of its own', () => {
  it('the public app answers 404 for /admin/ and /admin/docs; the admin app serves them', async () => {
    const config = loadConfig({
      DATABASE_URL: 'sqlite::memory:',
      LOG_LEVEL: 'silent',
      OPENVAT_ADMIN_PORT: '0',
    });
    const container = await createContainer(config, { redis: null });
    const publicApp = await buildApp(container);
    const adminApp = await buildApp(container, { surface: 'admin' });
    try {
      for (const url of ['/admin/', '/admin', '/admin/docs/', '/admin/console.js', '/admin/openapi.json']) {
        const res = await publicApp.inject({ method: 'GET', url });
        assert.equal(res.statusCode, 404, `public ${url}`);
        assert.equal(res.json().error.code, 'not_found');
        assert.equal(
          (await adminApp.inject({ method: 'GET', url })).statusCode,
          url === '/admin/console.js' ? 200 : url === '/admin/docs/' ? 200 : 200,
          `admin ${url}`,
        );
      }
      assert.equal((await publicApp.inject({ method: 'GET', url: '/dashboard' })).statusCode, 200);
      // The scripts both pages share: each plane serves them under its own path.
      for (const file of ['dom.js', 'usage-chart.js', 'registry-status.js']) {
        assert.equal(
          (await adminApp.inject({ method: 'GET', url: `/admin/shared/${file}` })).statusCode,
          200,
        );
        assert.equal(
          (await publicApp.inject({ method: 'GET', url: `/admin/shared/${file}` })).statusCode,
          404,
        );
        assert.equal(
          (await publicApp.inject({ method: 'GET', url: `/dashboard/shared/${file}` })).statusCode,
          200,
        );
      }
      const root = await adminApp.inject({ method: 'GET', url: '/' });
      assert.equal(root.statusCode, 302);
      assert.equal(root.headers.location, '/admin/');
      assert.equal((await publicApp.inject({ method: 'GET', url: '/' })).headers.location, '/docs/');
    } finally {
      await publicApp.close();
      await adminApp.close();
      await container.close();
    }
  });
});
