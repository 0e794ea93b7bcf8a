import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { PACKAGE_ROOT } from '../../config.js';

/** Where the guides are served: `/guides/<file>`, one route per file of the package's docs/ folder. */
export const GUIDES_PATH = '/guides/';

export interface Guide {
  /** The file name in docs/, e.g. `configuration.md`. */
  readonly file: string;
  /** The page's first heading (the file name for a file without one). */
  readonly title: string;
  readonly type: string;
  readonly body: Buffer;
}

const TYPES: Record<string, string> = {
  // Plain text, so a browser shows the Markdown instead of downloading it.
  md: 'text/plain; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

const SERVED = /^[a-z0-9-]+\.(md|json)$/;

/** The Markdown pages (and the files they link to) of docs/, read once at start. */
export function loadGuides(dir: string = join(PACKAGE_ROOT, 'docs')): Guide[] {
  const files = readdirSync(dir)
    .filter((file) => SERVED.test(file))
    .sort();
  const served = new Set(files);
  return files.map((file) => {
    const text = readFileSync(join(dir, file), 'utf8');
    const extension = file.slice(file.lastIndexOf('.') + 1);
    const heading = extension === 'md' ? /^# (.+)$/m.exec(text)?.[1] : undefined;
    const body = Buffer.from(extension === 'md' ? servedLinks(text, served) : text);
    return { file, title: heading?.trim() ?? file, type: TYPES[extension] as string, body };
  });
}

/**
 * A page as `/guides/` serves it. Its links to other files of docs/ resolve there as they are (each
 * file is served beside the page, so `validation.md#test-mode` from `/guides/api.md` is
 * `/guides/validation.md`); a link that leaves docs/ (`../clients/typescript/README.md`) names a
 * file of the repository that the service does not serve, so it becomes its text, which names that
 * file. Fenced code blocks are left as they are.
 */
function servedLinks(markdown: string, served: ReadonlySet<string>): string {
  return markdown
    .split(/(^ *```[^\n]*\n[\s\S]*?^ *```$)/m)
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part.replace(/\[([^\]\n]*)\]\(([^)\s]+)\)/g, (link, text: string, target: string) =>
            resolvesInDocs(target, served) ? link : text,
          ),
    )
    .join('');
}

function resolvesInDocs(target: string, served: ReadonlySet<string>): boolean {
  // Another site, or a path of this server (`/docs`): not relative to the page.
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('/')) return true;
  const path = target.split('#')[0] as string;
  return path === '' || served.has(posix.normalize(path));
}

/** The Markdown list of the guides for the API description that `/docs` shows. */
export function guidesIndex(guides: readonly Guide[]): string {
  const links = guides
    .filter((guide) => guide.file.endsWith('.md'))
    .map((guide) => `[${guide.title}](${GUIDES_PATH}${guide.file})`);
  return `**Guides.** ${links.join(' · ')}`;
}

/**
 * `GET /guides/` and `GET /guides/<file>`: the pages of docs/ as they are in the package, so the
 * running service documents itself (`/docs` links to them) and their relative links resolve.
 */
export function guidesRoutes(guides: readonly Guide[]) {
  const index = Buffer.from(
    `# openvat guides\n\n${guides
      .filter((guide) => guide.file.endsWith('.md'))
      .map((guide) => `- [${guide.title}](${guide.file})`)
      .join('\n')}\n\nThe API reference: [/docs](/docs)\n`,
  );
  return async function register(app: FastifyInstance) {
    const headers = { 'x-content-type-options': 'nosniff', 'cache-control': 'no-cache' };
    // Without the slash the index's relative links would resolve from the root: send the reader there.
    app.get(GUIDES_PATH.slice(0, -1), { schema: { hide: true } }, (_request, reply) =>
      reply.redirect(GUIDES_PATH, 301),
    );
    app.get(GUIDES_PATH, { schema: { hide: true } }, (_request, reply) =>
      reply
        .headers(headers)
        .type(TYPES.md as string)
        .send(index),
    );
    for (const guide of guides) {
      app.get(`${GUIDES_PATH}${guide.file}`, { schema: { hide: true } }, (_request, reply) =>
        reply.headers(headers).type(guide.type).send(guide.body),
      );
    }
  };
}
