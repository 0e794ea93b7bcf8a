import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { PACKAGE_ROOT } from '../../config.js';
import { GUIDES_PATH, type Guides, loadGuides as loadFrom } from './guides.js';

export { GUIDES_PATH, type Guides } from './guides.js';

/** The guides of the package: docs/, the README and the TypeScript client's README. */
export function loadGuides(root: string = PACKAGE_ROOT): Guides {
  return loadFrom(root);
}

/**
 * The pages are the package's own Markdown, so nothing in them runs: no script at all, only the
 * style sheet of this server, and no framing.
 */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; " +
    "frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
};
const FILE_HEADERS = { 'x-content-type-options': 'nosniff', 'cache-control': 'no-cache' };
const HTML = 'text/html; charset=utf-8';

/** The Markdown list of the guides for the API description that `/docs` shows. */
export function guidesIndex(guides: Guides): string {
  const links = guides.pages.map((guide) => `[${guide.title}](${GUIDES_PATH}${guide.name})`);
  return `**Guides** ([all](${GUIDES_PATH})). ${links.join(' · ')}`;
}

/**
 * `GET /guides/`: the index; `GET /guides/<name>`: a guide as a page, its links to other guides and
 * to the files they name rewritten to where this server serves them; `GET /guides/<name>.md`: the
 * guide's Markdown as it is in the package; and those files (`/guides/grafana-dashboard.json`).
 */
export function guidesRoutes(guides: Guides) {
  const style = readFileSync(join(PACKAGE_ROOT, 'public', 'guides', 'guides.css'));
  return async function register(app: FastifyInstance) {
    const hide = { schema: { hide: true } };
    app.get(GUIDES_PATH.slice(0, -1), hide, (_request, reply) => reply.redirect(GUIDES_PATH, 301));
    app.get(GUIDES_PATH, hide, (_request, reply) =>
      reply.headers(PAGE_HEADERS).type(HTML).send(guides.indexHtml()),
    );
    app.get(`${GUIDES_PATH}guides.css`, hide, (_request, reply) =>
      reply.headers(FILE_HEADERS).type('text/css; charset=utf-8').send(style),
    );
    for (const guide of guides.pages) {
      const markdown = Buffer.from(guide.markdown);
      app.get(`${GUIDES_PATH}${guide.name}`, hide, (_request, reply) =>
        reply.headers(PAGE_HEADERS).type(HTML).send(guides.html(guide.name)),
      );
      app.get(`${GUIDES_PATH}${guide.name}.md`, hide, (_request, reply) =>
        reply.headers(FILE_HEADERS).type('text/markdown; charset=utf-8').send(markdown),
      );
    }
    for (const file of guides.files) {
      app.get(`${GUIDES_PATH}${file.name}`, hide, (_request, reply) =>
        reply.headers(FILE_HEADERS).type(file.type).send(file.body),
      );
    }
  };
}
