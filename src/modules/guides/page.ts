/** Text for HTML: element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

/** The frame of every page under /guides/: title, the site's links, the style sheet; no script. */
function frame(title: string, main: string, head = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/guides/guides.css">${head}
</head>
<body>
<header>
<a class="brand" href="/guides/">openvat</a>
<nav aria-label="Site">
<a href="/guides/">Guides</a>
<a href="/docs/">API reference</a>
<a href="/dashboard">Dashboard</a>
</nav>
</header>
<main>
${main}
</main>
</body>
</html>
`;
}

/** A guide: its rendered Markdown (trusted, from the package) and a link to the Markdown itself. */
export function guidePage(page: { title: string; body: string; source: string }): string {
  const source = escapeHtml(page.source);
  return frame(
    `${page.title} · openvat guides`,
    `<article class="guide">
${page.body}</article>
<footer><a href="/guides/">All guides</a> · <a href="${source}" type="text/markdown">Markdown source</a></footer>`,
    `\n<link rel="alternate" type="text/markdown" href="${source}">`,
  );
}

export interface IndexGroup {
  title: string;
  /** `description` is HTML (rendered from the README); the rest is text. */
  entries: { href: string; label: string; description: string }[];
}

/** `/guides/`: the guides in the README's groups, each with its one-line description. */
export function indexPage(index: {
  readme: { href: string; title: string } | null;
  groups: IndexGroup[];
}): string {
  const groups = index.groups
    .map(
      (group) => `<section>
<h2>${escapeHtml(group.title)}</h2>
<ul class="guides">
${group.entries
  .map(
    (entry) =>
      `<li><a href="${escapeHtml(entry.href)}">${escapeHtml(entry.label)}</a>${
        entry.description === '' ? '' : `<span class="description">${entry.description}</span>`
      }</li>`,
  )
  .join('\n')}
</ul>
</section>`,
    )
    .join('\n');
  const readme = index.readme
    ? ` The project's overview, with a quick start, is its <a href="${escapeHtml(index.readme.href)}">README</a>.`
    : '';
  return frame(
    'openvat guides',
    `<article class="guide">
<h1>Guides</h1>
<p>How to use, run and work on openvat. The reference of every route is at <a href="/docs/">/docs</a>.${readme}</p>
${groups}
</article>`,
  );
}
