import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { PACKAGE_ROOT } from '../../config.js';
import { PAGE_SECURITY_HEADERS } from '../../http/page-security.js';
import { sharedScripts } from '../../http/shared-assets.js';

const ASSETS = join(PACKAGE_ROOT, 'public', 'dashboard');

const SCRIPT = 'application/javascript; charset=utf-8';

const FILES = [
  { paths: ['/dashboard', '/dashboard/'], file: 'index.html', type: 'text/html; charset=utf-8' },
  { paths: ['/dashboard/dashboard.js'], file: 'dashboard.js', type: SCRIPT },
  { paths: ['/dashboard/page.js'], file: 'page.js', type: SCRIPT },
  { paths: ['/dashboard/monitors.js'], file: 'monitors.js', type: SCRIPT },
  { paths: ['/dashboard/dashboard.css'], file: 'dashboard.css', type: 'text/css; charset=utf-8' },
];

/**
 * `GET /dashboard`: a key holder's usage, webhook endpoints and deliveries, and audit look-ups. A
 * static page that signs in with an API key and uses the public API with it, so it can see and do
 * exactly what the key can.
 */
export function dashboardRoutes() {
  const assets = [
    ...FILES.map((f) => ({ ...f, file: join(ASSETS, f.file) })),
    // The modules dashboard.js imports, shared with the admin console.
    ...sharedScripts('/dashboard').map(({ url, file }) => ({ paths: [url], file, type: SCRIPT })),
  ].map((asset) => ({ ...asset, body: readFileSync(asset.file) }));
  const favicon = readFileSync(join(PACKAGE_ROOT, 'public', 'favicon.svg'));
  return async function register(app: FastifyInstance) {
    // Browsers ask for /favicon.ico on every page (the dashboard and /docs): one small SVG answers.
    for (const path of ['/favicon.ico', '/favicon.svg']) {
      app.get(path, { schema: { hide: true } }, (_request, reply) =>
        reply.header('cache-control', 'public, max-age=86400').type('image/svg+xml').send(favicon),
      );
    }
    for (const asset of assets) {
      for (const path of asset.paths) {
        app.get(path, { schema: { hide: true } }, (_request, reply) =>
          reply.headers(PAGE_SECURITY_HEADERS).type(asset.type).send(asset.body),
        );
      }
    }
  };
}
