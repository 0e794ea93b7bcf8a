import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.js';

describe('GET /dashboard', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const get = (url: string) => t.app.inject({ method: 'GET', url });

  /** A module script a browser can run: `node --check` parses it as a module. */
  const parses = (source: string) =>
    spawnSync(process.execPath, ['--check', '--input-type=module'], { input: source }).status === 0;

  /** The paths of the dashboard's script and every module it imports, near or far, each served. */
  async function dashboardModules(): Promise<Map<string, string>> {
    const modules = new Map<string, string>();
    const pending = ['/dashboard/dashboard.js'];
    while (pending.length > 0) {
      const path = pending.pop() ?? '';
      const res = await get(path);
      assert.equal(res.statusCode, 200, path);
      modules.set(path, res.body);
      for (const [, imported] of res.body.matchAll(/from '(\.\/[\w/-]+\.js)'/g)) {
        const url = new URL(imported ?? '', `http://dashboard${path}`).pathname;
        if (!modules.has(url) && !pending.includes(url)) pending.push(url);
      }
    }
    return modules;
  }

  /** The dashboard's script and the modules it imports, as one text. */
  const dashboardScript = async () => [...(await dashboardModules()).values()].join('\n');

  it('serves the page, its script and its style with headers that keep the key in the page', async () => {
    const page = await get('/dashboard');
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html; charset=utf-8/);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/, 'no inline or foreign script');
    assert.match(csp, /connect-src 'self'/, 'the key is sent to this server only');
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.ok(page.headers['service-request-id']);
    assert.doesNotMatch(page.body, /<script>|\son\w+=/i, 'no inline script or handler');
    assert.equal((await get('/dashboard/')).body, page.body);

    const script = await get('/dashboard/dashboard.js');
    assert.equal(script.statusCode, 200);
    assert.match(String(script.headers['content-type']), /^application\/javascript/);
    assert.ok(parses(script.body), 'a module script a browser can run');
    assert.doesNotMatch(
      script.body,
      /innerHTML|insertAdjacentHTML|document\.write/,
      'data is never parsed as HTML',
    );
    assert.ok(page.body.includes('<script type="module" src="/dashboard/dashboard.js"></script>'));
    // The modules it imports (its panels, and those shared with the admin console) are served beside
    // it, under the same policy.
    const modules = await dashboardModules();
    assert.ok(modules.has('/dashboard/shared/usage-chart.js'), [...modules.keys()].join());
    for (const [path, body] of modules) {
      const module = await get(path);
      assert.match(String(module.headers['content-type']), /^application\/javascript/, path);
      assert.equal(module.headers['content-security-policy'], csp, path);
      assert.ok(parses(body), `${path}: a module a browser can run`);
      assert.doesNotMatch(body, /innerHTML|insertAdjacentHTML|document\.write/, path);
    }

    const style = await get('/dashboard/dashboard.css');
    assert.equal(style.statusCode, 200);
    assert.match(String(style.headers['content-type']), /^text\/css/);
    assert.ok(page.body.includes('href="/dashboard/dashboard.css"'));
  });

  it('shows the public registry status from GET /v1/status, built with textContent', async () => {
    const html = (await get('/dashboard')).body;
    const script = await dashboardScript();
    assert.ok(html.includes('id="registry-status"'));
    assert.match(script, /fetch\('\/v1\/status'/);
    const status = await get('/v1/status');
    assert.equal(status.statusCode, 200, 'the path the panel reads exists and needs no key');
    for (const field of ['shared', 'instances', 'registries']) assert.ok(field in status.json().data);
    for (const field of [
      'in_flight',
      'concurrency_limit',
      'queued',
      'last_success_at',
      'last_failure_at',
      'retry_after_seconds',
    ]) {
      assert.ok(script.includes(`r.${field}`), `the panel shows ${field}`);
    }
  });

  it('every element the script uses is on the page, and every API path it calls exists', async () => {
    const html = (await get('/dashboard')).body;
    const script = await dashboardScript();
    const ids = [...script.matchAll(/\$\('([\w-]+)'\)/g)].map((m) => m[1]);
    assert.ok(ids.length > 20);
    for (const id of new Set(ids)) assert.ok(html.includes(`id="${id}"`), `#${id} is on the page`);

    const doc = (await get('/openapi.json')).json();
    const calls = [...script.matchAll(/api\('(GET|POST|PATCH|DELETE)', ['`]([^`']+)/g)].map((m) => [
      (m[1] as string).toLowerCase(),
      (m[2] as string).replace(/\?.*$/, '').replace(/\$\{[^}]+\}/g, '{x}'),
    ]);
    assert.equal(calls.length, 14);
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, methods]) => Object.keys(methods).map((m) => `${m} ${path.replace(/\{[^}]+\}/g, '{x}')}`),
    );
    for (const [method, path] of calls) {
      assert.ok(documented.includes(`${method} ${path}`), `${method} ${path} is an API operation`);
    }
  });

  it('has a Monitors panel that shows a note, not an error, for plans without monitoring', async () => {
    const html = (await get('/dashboard')).body;
    const script = await dashboardScript();
    assert.ok(html.includes('<section id="monitors" class="panel wide">'));
    assert.match(script, /panel\('monitors', loadMonitors\)/);
    assert.match(script, /error\.status === 402 \|\| error\.status === 403/);
    const free = await t.key('free');
    const refused = await t.app.inject({ method: 'GET', url: '/v1/monitors/summary', headers: free.headers });
    assert.ok([402, 403].includes(refused.statusCode), `a free key gets ${refused.statusCode}`);
    for (const field of ['last_checked_at', 'next_check_at', 'stale', 'next_cursor', 'detected_at']) {
      assert.ok(script.includes(`.${field}`), `the panel uses ${field}`);
    }
  });

  it('is not part of the API reference', async () => {
    const doc = (await get('/openapi.json')).json();
    assert.ok(!Object.keys(doc.paths).some((p) => p.startsWith('/dashboard')));
  });
});
