import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.js';

/** The documentation: README.md and every page of docs/, read from the repository. */
const PAGES = readdirSync('docs')
  .filter((file) => file.endsWith('.md'))
  .sort();
const MARKDOWN = ['README.md', ...PAGES.map((file) => join('docs', file))];

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

/** Link targets of a Markdown file on this site (no scheme), outside code blocks and code spans. */
function siteLinks(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] as string)
    .filter((target) => !/^[a-z]+:/i.test(target));
}

/** Relative link targets of a Markdown file, outside code blocks and code spans. */
function relativeLinks(markdown: string): string[] {
  return siteLinks(markdown).filter((target) => !target.startsWith('/'));
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
    const missing = readdirSync('docs').filter((file) => !linked.has(`docs/${file}`));
    assert.deepEqual(missing, []);
  });

  it('the performance page holds one table with every benchmark block, each opened and closed once', () => {
    const lines = readFileSync('docs/performance.md', 'utf8').split('\n');
    const opened = lines.flatMap((line) => /^<!-- bench:([a-z0-9-]+) -->$/.exec(line)?.[1] ?? []);
    const closed = lines.flatMap((line) => /^<!-- \/bench:([a-z0-9-]+) -->$/.exec(line)?.[1] ?? []);
    assert.ok(opened.length >= 10, `${opened.length} blocks`);
    assert.deepEqual(closed, opened);
    assert.equal(new Set(opened).size, opened.length);
    const first = lines.indexOf(`<!-- bench:${opened[0]} -->`);
    const last = lines.indexOf(`<!-- /bench:${opened.at(-1)} -->`);
    assert.equal(lines[first - 1], '|---|---|---|---|', 'the blocks start right under the table header');
    for (const line of lines.slice(first, last + 1)) {
      assert.match(line, /^(<!-- \/?bench:[a-z0-9-]+ -->|\|.*\|)$/, 'only rows and markers inside the table');
    }
  });
});

describe('guides served by the service', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('the description shown by /docs links every page of docs/, and each link serves that page', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const links = [...String(doc.info.description).matchAll(/\]\((\/guides\/[^)]+)\)/g)].map((m) => m[1]);
    assert.deepEqual(
      links,
      PAGES.map((file) => `/guides/${file}`),
    );
    for (const file of PAGES) {
      const res = await t.app.inject({ method: 'GET', url: `/guides/${file}` });
      assert.equal(res.statusCode, 200, file);
      assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      // The page as it is, but for its links out of docs/, which become their text.
      const page = readFileSync(join('docs', file), 'utf8');
      assert.equal(res.body, page.replace(/\[([^\]\n]*)\]\(\.\.\/[^)\s]*\)/g, '$1'), file);
    }
    const title = /^# (.+)$/m.exec(readFileSync('docs/configuration.md', 'utf8'))?.[1];
    assert.ok(String(doc.info.description).includes(`[${title}](/guides/configuration.md)`));
  });

  it('the files the pages link to are served beside them, and the index lists the pages', async () => {
    const grafana = await t.app.inject({ method: 'GET', url: '/guides/grafana-dashboard.json' });
    assert.equal(grafana.statusCode, 200);
    assert.deepEqual(grafana.json(), JSON.parse(readFileSync('docs/grafana-dashboard.json', 'utf8')));
    const index = await t.app.inject({ method: 'GET', url: '/guides/' });
    assert.equal(index.statusCode, 200);
    const listed = [...index.body.matchAll(/\]\(([a-z0-9-]+\.md)\)/g)].map((m) => m[1]);
    assert.deepEqual(listed, PAGES);
    const bare = await t.app.inject({ method: 'GET', url: '/guides' });
    assert.equal(bare.statusCode, 301, 'without the slash, the index is one redirect away');
    assert.equal(bare.headers.location, '/guides/');
  });

  it('every link of a served guide, and of the index, resolves on the server to a page that has its anchor', async () => {
    const origin = 'http://openvat.test';
    const broken: string[] = [];
    let followed = 0;
    for (const from of ['/guides/', ...PAGES.map((file) => `/guides/${file}`)]) {
      const page = await t.app.inject({ method: 'GET', url: from });
      assert.equal(page.statusCode, 200, from);
      for (const link of siteLinks(page.body)) {
        const target = new URL(link, `${origin}${from}`);
        assert.equal(target.origin, origin);
        let res = await t.app.inject({ method: 'GET', url: target.pathname });
        // A browser follows a redirect (`/docs` → `/docs/`).
        for (let hops = 0; hops < 3 && res.statusCode >= 300 && res.statusCode < 400; hops += 1) {
          res = await t.app.inject({ method: 'GET', url: String(res.headers.location) });
        }
        followed += 1;
        if (res.statusCode !== 200) {
          broken.push(`${from}: ${link} (${target.pathname}: ${res.statusCode})`);
          continue;
        }
        const anchor = target.hash.slice(1);
        if (anchor !== '' && target.pathname.endsWith('.md') && !anchors(res.body).has(anchor)) {
          broken.push(`${from}: ${link} (no heading #${anchor} in ${target.pathname})`);
        }
      }
    }
    assert.ok(followed > 50, `${followed} links followed`);
    assert.deepEqual(broken, []);
  });

  it('anything else under /guides/ is the API 404', async () => {
    for (const url of ['/guides/nope.md', '/guides/../README.md', '/guides/%2e%2e/package.json']) {
      const res = await t.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.json().error.code, 'not_found', url);
    }
  });
});
