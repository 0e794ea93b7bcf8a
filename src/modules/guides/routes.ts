import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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

/** The Markdown pages (and the files they link to) of docs/, read once at start. */
export function loadGuides(dir: string = join(PACKAGE_ROOT, 'docs')): Guide[] {
  return readdirSync(dir)
    .filter((file) => /^[a-z0-9-]+\.(md|json)$/.test(file))
    .sort()
    .map((file) => {
      const body = readFileSync(join(dir, file));
      const extension = file.slice(file.lastIndexOf('.') + 1);
      const heading = extension === 'md' ? /^# (.+)$/m.exec(body.toString('utf8'))?.[1] : undefined;
      return { file, title: heading?.trim() ?? file, type: TYPES[extension] as string, body };
    });
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
