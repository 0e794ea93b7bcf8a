import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { PACKAGE_ROOT } from '../../config.js';
import { PAGE_SECURITY_HEADERS } from '../../http/page-security.js';
import { registerReference } from '../../http/reference-page.js';
import { sharedScripts } from '../../http/shared-assets.js';

const ASSETS = join(PACKAGE_ROOT, 'public', 'admin');
const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

/**
 * The console's files: its page, scripts and style, the scripts it shares with the dashboard, the
 * dashboard's style (the same look) and the icon.
 */
function assets() {
  const own = readdirSync(ASSETS)
    .filter((file) => /\.(js|css)$/.test(file))
    .map((file) => ({ paths: [`/admin/${file}`], path: join(ASSETS, file) }));
  return [
    { paths: ['/admin', '/admin/'], path: join(ASSETS, 'index.html') },
    ...own,
    ...sharedScripts('/admin').map(({ url, file }) => ({ paths: [url], path: file })),
    { paths: ['/admin/base.css'], path: join(PACKAGE_ROOT, 'public', 'dashboard', 'dashboard.css') },
    { paths: ['/admin/favicon.svg'], path: join(PACKAGE_ROOT, 'public', 'favicon.svg') },
  ].map((asset) => ({
    ...asset,
    type: TYPES[asset.path.slice(asset.path.lastIndexOf('.') + 1)] ?? 'application/octet-stream',
    body: readFileSync(asset.path),
  }));
}

/**
 * `GET /admin/`: the operators' console, a static page that signs in with an admin key and uses the
 * admin API with it; and `GET /admin/docs`: the admin API's reference, from `/admin/openapi.json`.
 * Served where the admin API is (the public listener, or the admin listener of its own, whose `/`
 * redirects to the console when `root`).
 */
export function adminConsoleRoutes(version: string, options: { root: boolean }) {
  const files = assets();
  return async function register(app: FastifyInstance) {
    // On the admin listener of its own, its root leads to the console.
    if (options.root) {
      app.get('/', { schema: { hide: true } }, (_request, reply) => reply.redirect('/admin/', 302));
    }
    for (const file of files) {
      for (const path of file.paths) {
        app.get(path, { schema: { hide: true } }, (_request, reply) =>
          reply.headers(PAGE_SECURITY_HEADERS).type(file.type).send(file.body),
        );
      }
    }
    // A context of its own: the page's policy hook sees only the reference's own answers.
    await app.register(async (reference) => {
      await registerReference(reference, {
        prefix: '/admin/docs',
        pageTitle: `openvat ${version} admin API reference`,
        title: 'openvat admin API',
        favicon: '/admin/favicon.svg',
        url: '/admin/openapi.json',
        scheme: 'adminKey',
        // An admin key typed into the page is not kept after the tab closes.
        persistAuth: false,
      });
    });
  };
}
