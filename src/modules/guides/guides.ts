import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { Marked, Renderer, type Tokens } from 'marked';
import { gfmHeadingId } from 'marked-gfm-heading-id';
import { escapeHtml, guidePage, indexPage } from './page.js';

/** Where the guides are served: `/guides/<name>` (the page) and `/guides/<name>.md` (its Markdown). */
export const GUIDES_PATH = '/guides/';

/** A Markdown file of the repository, served as a page and as its source. */
export interface Guide {
  /** The page's name in its URL: `validation` for docs/validation.md. */
  readonly name: string;
  /** The file's path in the package, e.g. `docs/validation.md`. */
  readonly path: string;
  /** The page's first heading (the file name for a file without one), as plain text. */
  readonly title: string;
  /** The file as it is. */
  readonly markdown: string;
}

/** Any other file the guides link to, served as it is. */
export interface GuideFile {
  /** Its URL under `/guides/`, e.g. `grafana-dashboard.json`. */
  readonly name: string;
  readonly path: string;
  readonly type: string;
  readonly body: Buffer;
}

export interface Guides {
  /** In the order of the index. */
  readonly pages: readonly Guide[];
  readonly files: readonly GuideFile[];
  /** A page's HTML, rendered on first use and kept. */
  html(name: string): string;
  /** The HTML of `/guides/`, rendered on first use and kept. */
  indexHtml(): string;
}

const FILE_TYPES: Record<string, string> = {
  json: 'application/json; charset=utf-8',
  // TypeScript examples: text, so a browser shows them.
  ts: 'text/plain; charset=utf-8',
  // The figures of docs/images/ (the flame graphs of performance.md).
  png: 'image/png',
};

/**
 * The Markdown served beside docs/: the README (the page the client's README links to) and the
 * TypeScript client's README, with the examples it links to. Each is served when the package holds it.
 */
const PAGES_OUTSIDE_DOCS = [
  { path: 'README.md', name: 'readme' },
  { path: 'clients/typescript/README.md', name: 'typescript-client' },
];
const FILES_OUTSIDE_DOCS = [
  { dir: 'clients/typescript/examples', under: 'typescript-client/examples/', file: /^[a-z0-9-]+\.ts$/ },
  { dir: 'docs/images', under: 'images/', file: /^[a-z0-9-]+\.png$/ },
];

/** The section of the README whose lists the index shows. */
const INDEX_SECTION = 'Documentation';

/** The pages of docs/ and the files they link to, read once; pages are rendered when first asked for. */
export function loadGuides(root: string): Guides {
  const pages: Guide[] = [];
  const files: GuideFile[] = [];
  const docs = readdirSync(posix.join(root, 'docs')).sort();
  for (const file of docs) {
    const match = /^([a-z0-9-]+)\.(md|json)$/.exec(file);
    if (!match) continue;
    const path = `docs/${file}`;
    if (match[2] === 'md') pages.push(readGuide(root, path, match[1] as string));
    else files.push(readFile(root, path, file));
  }
  for (const { path, name } of PAGES_OUTSIDE_DOCS) {
    if (existsSync(posix.join(root, path))) pages.push(readGuide(root, path, name));
  }
  for (const { dir, under, file: served } of FILES_OUTSIDE_DOCS) {
    if (!existsSync(posix.join(root, dir))) continue;
    for (const file of readdirSync(posix.join(root, dir)).sort()) {
      if (served.test(file)) files.push(readFile(root, `${dir}/${file}`, `${under}${file}`));
    }
  }

  // Where each served file of the package is served: relative links between them resolve through this.
  const urls = new Map<string, string>([
    ...pages.map((page): [string, string] => [page.path, `${GUIDES_PATH}${page.name}`]),
    ...files.map((file): [string, string] => [file.path, `${GUIDES_PATH}${file.name}`]),
  ]);
  const readme = pages.find((page) => page.path === 'README.md');
  const groups = readme ? indexGroups(readme, pages) : [];
  const listed = new Set(groups.flatMap((group) => group.entries.map((entry) => entry.page)));
  const unlisted = pages.filter((page) => !listed.has(page) && page !== readme);
  if (unlisted.length > 0) {
    groups.push({
      title: 'More guides',
      entries: unlisted.map((page) => ({ page, label: page.title, description: '' })),
    });
  }
  const ordered = [...(readme ? [readme] : []), ...groups.flatMap((g) => g.entries.map((e) => e.page))];

  const rendered = new Map<string, string>();
  let index: string | undefined;
  return {
    pages: ordered,
    files,
    html(name) {
      let html = rendered.get(name);
      if (html === undefined) {
        const page = pages.find((p) => p.name === name);
        if (!page) throw new Error(`no guide named ${name}`);
        html = guidePage({
          title: page.title,
          body: renderMarkdown(page.markdown, page.path, urls),
          source: `${GUIDES_PATH}${page.name}.md`,
        });
        rendered.set(name, html);
      }
      return html;
    },
    indexHtml() {
      index ??= indexPage({
        readme: readme ? { href: `${GUIDES_PATH}${readme.name}`, title: readme.title } : null,
        groups: groups.map((group) => ({
          title: group.title,
          entries: group.entries.map((entry) => ({
            href: `${GUIDES_PATH}${entry.page.name}`,
            label: entry.label,
            description: entry.description === '' ? '' : renderInline(entry.description, 'README.md', urls),
          })),
        })),
      });
      return index;
    },
  };
}

function readGuide(root: string, path: string, name: string): Guide {
  const markdown = readFileSync(posix.join(root, path), 'utf8');
  const heading = /^# (.+)$/m.exec(markdown)?.[1];
  return { name, path, title: heading ? plainText(heading) : path, markdown };
}

function readFile(root: string, path: string, name: string): GuideFile {
  const extension = path.slice(path.lastIndexOf('.') + 1);
  return { name, path, type: FILE_TYPES[extension] as string, body: readFileSync(posix.join(root, path)) };
}

/** A heading's text without its Markdown (code spans, emphasis, links). */
function plainText(markdown: string): string {
  const text = (tokens: readonly Tokens.Generic[]): string =>
    tokens
      .map((token) =>
        'tokens' in token && Array.isArray(token.tokens)
          ? text(token.tokens)
          : String((token as { text?: string }).text ?? ''),
      )
      .join('');
  return text(new Marked().Lexer.lexInline(markdown)).trim();
}

interface IndexGroup {
  title: string;
  entries: { page: Guide; label: string; description: string }[];
}

/**
 * The README's Documentation section as groups of guides: each paragraph ending with a colon
 * names the lists under it, each list item `[Label](path): description` names a page.
 */
function indexGroups(readme: Guide, pages: readonly Guide[]): IndexGroup[] {
  const tokens = new Marked().lexer(readme.markdown);
  const start = tokens.findIndex(
    (token) => token.type === 'heading' && token.depth === 2 && token.text === INDEX_SECTION,
  );
  if (start === -1) return [];
  const groups: IndexGroup[] = [];
  for (const token of tokens.slice(start + 1)) {
    if (token.type === 'heading' && token.depth <= 2) break;
    if (token.type === 'paragraph' && token.text.endsWith(':')) {
      groups.push({ title: token.text.slice(0, -1), entries: [] });
    } else if (token.type === 'list') {
      if (groups.length === 0) groups.push({ title: 'Guides', entries: [] });
      const group = groups.at(-1) as IndexGroup;
      for (const item of (token as Tokens.List).items) {
        const match = /^\[([^\]]+)\]\(([^)\s#]+)\)(?::\s*([\s\S]*))?$/.exec(item.text.trim());
        const page = match && pages.find((p) => p.path === posix.normalize(match[2] as string));
        if (!match || !page) continue;
        group.entries.push({ page, label: match[1] as string, description: match[3]?.trim() ?? '' });
      }
    }
  }
  return groups.filter((group) => group.entries.length > 0);
}

/** Lines that hold only an HTML comment (the benchmark markers inside performance.md's table). */
function withoutCommentLines(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .filter((line) => {
      if (/^ {0,3}(```|~~~)/.test(line)) fenced = !fenced;
      return fenced || !/^<!--.*-->\s*$/.test(line);
    })
    .join('\n');
}

/**
 * A Marked for the file at `from`: a relative link to a file that is served becomes its URL (its
 * anchor kept), one to a file that is not served becomes its text; so does an image's source (an
 * image not served becomes its alternative text); tables scroll on their own.
 */
function markedFor(from: string, urls: ReadonlyMap<string, string>): Marked {
  const unserved = new WeakSet<Tokens.Link | Tokens.Image>();
  return new Marked({ gfm: true }, gfmHeadingId(), {
    walkTokens(token) {
      if (token.type !== 'link' && token.type !== 'image') return;
      const link = token as Tokens.Link | Tokens.Image;
      // Another site, a path of this server (`/docs`), or an anchor of this page.
      if (/^[a-z][a-z0-9+.-]*:/i.test(link.href) || link.href.startsWith('/') || link.href.startsWith('#')) {
        return;
      }
      const hash = link.href.indexOf('#');
      const target = hash === -1 ? link.href : link.href.slice(0, hash);
      const url = urls.get(posix.normalize(posix.join(posix.dirname(from), decodeURI(target))));
      if (url === undefined) unserved.add(link);
      else link.href = hash === -1 ? url : `${url}${link.href.slice(hash)}`;
    },
    renderer: {
      link(token) {
        return unserved.has(token) ? this.parser.parseInline(token.tokens) : false;
      },
      image(token) {
        return unserved.has(token) ? escapeHtml(token.text) : false;
      },
      table(token) {
        // The table scrolls inside its box, so a wide one never widens the page.
        const label = escapeHtml(token.header.map((cell) => plainText(cell.text)).join(', '));
        const table = Renderer.prototype.table.call(this, token);
        return `<div class="table" role="region" tabindex="0" aria-label="Table: ${label}">\n${table}</div>\n`;
      },
    },
  });
}

function renderMarkdown(markdown: string, from: string, urls: ReadonlyMap<string, string>): string {
  return markedFor(from, urls).parse(withoutCommentLines(markdown), { async: false });
}

function renderInline(markdown: string, from: string, urls: ReadonlyMap<string, string>): string {
  return markedFor(from, urls).parseInline(markdown, { async: false });
}
