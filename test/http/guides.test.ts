import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.js';

/**
 * The documentation: README.md and every page of docs/, read from the repository. A draft
 * (`*.draft.md`: a section still to be merged into its page) is checked like a page but is not one:
 * it is not served and the README does not list it.
 */
const isDraft = (file: string) => file.endsWith('.draft.md');
const PAGES = readdirSync('docs')
  .filter((file) => file.endsWith('.md') && !isDraft(file))
  .sort();
const DRAFTS = readdirSync('docs').filter(isDraft).sort();
const MARKDOWN = ['README.md', ...[...PAGES, ...DRAFTS].map((file) => join('docs', file))];

/** Headings outside fenced code blocks. */
function headings(markdown: string): string[] {
  let fenced = false;
  const out: string[] = [];
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    else if (!fenced && /^#{1,6} /.test(line)) out.push(line.replace(/^#+ /, ''));
  }
  return out;
}

/** The anchors GitHub gives a page's headings (lower case, punctuation dropped, spaces to dashes, repeats numbered). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const heading of headings(markdown)) {
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** A Markdown file's text outside code blocks and code spans. */
const proseOf = (markdown: string) => markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');

/** Targets on this site (no scheme) of links or images (`![…](…)`) of a Markdown file, outside code. */
function siteTargets(markdown: string, of: 'links' | 'images' | 'both' = 'both'): string[] {
  return [...proseOf(markdown).matchAll(/(!?)\[[^\]\n]*\]\(([^)\s]+)\)/g)]
    .filter((match) => of === 'both' || (match[1] === '!') === (of === 'images'))
    .map((match) => match[2] as string)
    .filter((target) => !/^[a-z]+:/i.test(target));
}

/** Relative targets of a Markdown file's links and images, outside code blocks and code spans. */
function relativeLinks(markdown: string, of: 'links' | 'images' | 'both' = 'both'): string[] {
  return siteTargets(markdown, of).filter((target) => !target.startsWith('/'));
}

describe('documentation pages', () => {
  it('every relative link of the README and docs/ points to a file, and to a heading that exists', () => {
    const broken: string[] = [];
    for (const file of MARKDOWN) {
      for (const link of relativeLinks(readFileSync(file, 'utf8'))) {
        const [path = '', anchor] = link.split('#');
        const target = path === '' ? file : normalize(join(dirname(file), path));
        if (!existsSync(target)) {
          broken.push(`${file}: ${link} (no file ${target})`);
          continue;
        }
        if (
          anchor !== undefined &&
          target.endsWith('.md') &&
          !anchors(readFileSync(target, 'utf8')).has(anchor)
        ) {
          broken.push(`${file}: ${link} (no heading #${anchor} in ${target})`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });

  it('the README links every page of docs/', () => {
    const linked = new Set(
      relativeLinks(readFileSync('README.md', 'utf8')).map((link) => link.split('#')[0]),
    );
    // Files, not folders: docs/images/ holds the figures the pages show.
    const missing = readdirSync('docs', { withFileTypes: true })
      .filter((entry) => entry.isFile() && !isDraft(entry.name) && !linked.has(`docs/${entry.name}`))
      .map((entry) => entry.name);
    assert.deepEqual(missing, []);
  });

  it('the performance page holds one table whose rows each carry one benchmark marker, each benchmark in one run', () => {
    const lines = readFileSync('docs/performance.md', 'utf8').split('\n');
    const header = lines.indexOf('| Benchmark | openvat | Baseline | Ratio |');
    assert.equal(lines[header + 1], '|---|---|---|---|');
    const rows: string[] = [];
    for (const line of lines.slice(header + 2)) {
      if (!line.startsWith('|')) break;
      rows.push(line);
    }
    const names = rows.map((row) => /^\|.* <!-- bench:([a-z0-9-]+) --> \|$/.exec(row)?.[1]);
    assert.ok(
      names.every((name) => name !== undefined),
      'every row ends with its marker',
    );
    const runs = names.filter((name, i) => name !== names[i - 1]);
    assert.ok(runs.length >= 10, `${runs.length} benchmarks`);
    assert.equal(new Set(runs).size, runs.length, "each benchmark's rows are one run");
    assert.ok(
      !lines.some((line) => /^<!--/.test(line)),
      'no comment on a line of its own (it would end the table in GitHub Markdown)',
    );
  });
});

/** The guides served as pages: every page of docs/, the README and the TypeScript client's README. */
const GUIDES = [
  ...PAGES.map((file) => ({ path: `docs/${file}`, url: `/guides/${file.replace(/\.md$/, '')}` })),
  { path: 'README.md', url: '/guides/readme' },
  { path: 'clients/typescript/README.md', url: '/guides/typescript-client' },
];

/** The href of every element of an HTML page (links, the style sheet, the icon). */
function hrefs(html: string): string[] {
  return [...html.matchAll(/\shref="([^"]*)"/g)].map((match) =>
    (match[1] as string)
      .replace(/&amp;/g, '&')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'"),
  );
}

/** The ids of an HTML page's elements. */
function ids(html: string): Set<string> {
  return new Set([...html.matchAll(/\sid="([^"]*)"/g)].map((match) => match[1] as string));
}

describe('guides served by the service', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const get = (url: string) => t.app.inject({ method: 'GET', url });

  it('the description shown by /docs links every guide page, and each link serves that page', async () => {
    const doc = (await get('/openapi.json')).json();
    const description = String(doc.info.description);
    const links = [...description.matchAll(/\]\((\/guides\/[^)]*)\)/g)].map((m) => m[1]);
    assert.deepEqual([...links].sort(), ['/guides/', ...GUIDES.map((guide) => guide.url)].sort());
    for (const link of links) {
      const res = await get(String(link));
      assert.equal(res.statusCode, 200, link);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8', link);
    }
    const title = /^# (.+)$/m.exec(readFileSync('docs/configuration.md', 'utf8'))?.[1];
    assert.ok(description.includes(`[${title}](/guides/configuration)`));
  });

  it('each guide is an HTML page: its Markdown rendered, its title, the site links, a strict policy', async () => {
    for (const guide of GUIDES) {
      const res = await get(guide.url);
      assert.equal(res.statusCode, 200, guide.url);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8', guide.url);
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /default-src 'none'/, guide.url);
      assert.doesNotMatch(csp, /script-src/, 'no script may run');
      assert.match(csp, /style-src 'self'(;|$)/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
      assert.doesNotMatch(res.body, /<script/i, guide.url);
      const heading = /^# (.+)$/m.exec(readFileSync(guide.path, 'utf8'))?.[1]?.replace(/`/g, '') ?? '';
      assert.match(
        res.body,
        new RegExp(`<title>${heading.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} · openvat guides</title>`),
        guide.url,
      );
      assert.match(res.body, /<h1 id="[^"]+">/, `${guide.url}: the Markdown is rendered`);
      for (const href of ['/guides/', '/docs/', '/dashboard', `${guide.url}.md`]) {
        assert.ok(hrefs(res.body).includes(href), `${guide.url} links ${href}`);
      }
    }
    const validation = (await get('/guides/validation')).body;
    assert.match(validation, /<h2 id="test-mode">Test mode<\/h2>/);
    assert.match(validation, /<div class="table"[^>]*>\s*<table>/, 'a table, in a box that scrolls');
    assert.doesNotMatch(validation, /^#|\]\(/m, 'no Markdown left as text');
    // The benchmark markers inside the performance table leave it one table.
    const performance = (await get('/guides/performance')).body;
    const results = performance.slice(performance.indexOf('id="results"'));
    const table = results.slice(results.indexOf('<table>'), results.indexOf('</table>'));
    assert.ok((table.match(/<tr>/g) ?? []).length > 10, 'every benchmark is a row of the results table');
  });

  it('the Markdown of each guide stays served as it is, as text/markdown', async () => {
    for (const guide of GUIDES) {
      const res = await get(`${guide.url}.md`);
      assert.equal(res.statusCode, 200, guide.url);
      assert.equal(res.headers['content-type'], 'text/markdown; charset=utf-8');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.equal(res.body, readFileSync(guide.path, 'utf8'), guide.url);
    }
  });

  it('the index lists every guide with its one-line description from the README', async () => {
    const index = await get('/guides/');
    assert.equal(index.statusCode, 200);
    assert.equal(index.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(String(index.headers['content-security-policy']), /default-src 'none'/);
    assert.match(index.body, /<title>openvat guides<\/title>/);
    const entries = [
      ...index.body.matchAll(
        /<li><a href="(\/guides\/[^"]+)">([^<]+)<\/a><span class="description">(.+?)<\/span><\/li>/g,
      ),
    ];
    assert.deepEqual(
      entries.map((entry) => entry[1]).sort(),
      GUIDES.filter((guide) => guide.path !== 'README.md')
        .map((guide) => guide.url)
        .sort(),
    );
    assert.ok(
      entries.some((entry) => entry[2] === 'Configuration' && entry[3] === 'every environment variable'),
    );
    assert.ok(hrefs(index.body).includes('/guides/readme'));
    const bare = await get('/guides');
    assert.equal(bare.statusCode, 301, 'without the slash, the index is one redirect away');
    assert.equal(bare.headers.location, '/guides/');
  });

  it('every link of every guide page, and of the index, answers 200, and its anchor exists', async () => {
    const origin = 'http://openvat.test';
    const broken: string[] = [];
    const followed = new Set<string>();
    for (const from of ['/guides/', ...GUIDES.map((guide) => guide.url)]) {
      const page = await get(from);
      assert.equal(page.statusCode, 200, from);
      assert.equal(page.headers['content-type'], 'text/html; charset=utf-8', from);
      for (const link of hrefs(page.body)) {
        const target = new URL(link, `${origin}${from}`);
        if (target.origin !== origin) continue;
        followed.add(target.pathname);
        let res = await get(`${target.pathname}${target.search}`);
        // A browser follows a redirect.
        for (let hops = 0; hops < 3 && res.statusCode >= 300 && res.statusCode < 400; hops += 1) {
          res = await get(String(res.headers.location));
        }
        if (res.statusCode !== 200) {
          broken.push(`${from}: ${link} (${res.statusCode})`);
          continue;
        }
        const anchor = decodeURIComponent(target.hash.slice(1));
        if (anchor !== '' && !ids(res.body).has(anchor)) {
          broken.push(`${from}: ${link} (no element #${anchor} in ${target.pathname})`);
        }
      }
    }
    // Every guide, the files they name, the style sheet and the other pages of the site.
    for (const url of [
      ...GUIDES.map((guide) => guide.url),
      '/guides/grafana-dashboard.json',
      '/guides/typescript-client/examples/node-http.ts',
      '/guides/guides.css',
      '/docs/',
      '/dashboard',
    ]) {
      assert.ok(followed.has(url), `${url} is linked`);
    }
    assert.deepEqual(broken, []);
  });

  it('no relative link of a guide is dropped: each is a link of its page', async () => {
    for (const guide of GUIDES) {
      const body = (await get(guide.url)).body;
      const article = body.slice(body.indexOf('<article'), body.indexOf('</article>'));
      const local = hrefs(article).filter((href) => href.startsWith('/guides/') || href.startsWith('#'));
      assert.equal(local.length, relativeLinks(readFileSync(guide.path, 'utf8'), 'links').length, guide.path);
    }
  });

  it('every image of a guide is shown from where the service serves it, as the file it is', async () => {
    let shown = 0;
    for (const guide of GUIDES) {
      const body = (await get(guide.url)).body;
      const article = body.slice(body.indexOf('<article'), body.indexOf('</article>'));
      const sources = [...article.matchAll(/<img\s[^>]*src="([^"]*)"/g)].map((match) => match[1] as string);
      const images = relativeLinks(readFileSync(guide.path, 'utf8'), 'images');
      assert.equal(sources.length, images.length, guide.path);
      for (const [i, source] of sources.entries()) {
        const file = normalize(join(dirname(guide.path), images[i] as string));
        assert.equal(source, `/guides/${file.replace(/^docs\//, '')}`, guide.path);
        const res = await get(source);
        assert.equal(res.statusCode, 200, source);
        assert.equal(res.headers['content-type'], 'image/png', source);
        assert.ok(res.rawPayload.equals(readFileSync(file)), source);
        shown += 1;
      }
    }
    // The flame graphs of performance.md, at least.
    assert.ok(shown >= 3, `${shown} images shown`);
  });

  it('the files the guides link to are served as they are', async () => {
    const grafana = await get('/guides/grafana-dashboard.json');
    assert.equal(grafana.statusCode, 200);
    assert.equal(grafana.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(grafana.json(), JSON.parse(readFileSync('docs/grafana-dashboard.json', 'utf8')));
    const example = await get('/guides/typescript-client/examples/fastify.ts');
    assert.equal(example.statusCode, 200);
    assert.equal(example.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(example.body, readFileSync('clients/typescript/examples/fastify.ts', 'utf8'));
    const style = await get('/guides/guides.css');
    assert.equal(style.statusCode, 200);
    assert.equal(style.headers['content-type'], 'text/css; charset=utf-8');
  });

  it('anything else under /guides/ is the API 404', async () => {
    for (const url of [
      '/guides/nope',
      '/guides/nope.md',
      '/guides/validation.html',
      '/guides/../README.md',
      '/guides/%2e%2e/package.json',
      '/guides/typescript-client/examples/tsconfig.json',
    ]) {
      const res = await get(url);
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.json().error.code, 'not_found', url);
    }
  });
});
