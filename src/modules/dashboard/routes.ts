import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { PACKAGE_ROOT } from '../../config.js';

const ASSETS = join(PACKAGE_ROOT, 'public', 'dashboard');

/**
 * The page may load only its own script and style and talk only to this server: it holds an API
 * key, so nothing else may run in it or frame it.
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
};

const FILES = [
  { paths: ['/dashboard', '/dashboard/'], file: 'index.html', type: 'text/html; charset=utf-8' },
  { paths: ['/dashboard/dashboard.js'], file: 'dashboard.js', type: 'application/javascript; charset=utf-8' },
  { paths: ['/dashboard/dashboard.css'], file: 'dashboard.css', type: 'text/css; charset=utf-8' },
];

/**
 * `GET /dashboard`: a key holder's usage, webhook endpoints and deliveries, and audit look-ups. A
 * static page that signs in with an API key and uses the public API with it, so it can see and do
 * exactly what the key can.
 */
export function dashboardRoutes() {
  const assets = FILES.map((f) => ({ ...f, body: readFileSync(join(ASSETS, f.file)) }));
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
          reply.headers(SECURITY_HEADERS).type(asset.type).send(asset.body),
        );
      }
    }
  };
}
