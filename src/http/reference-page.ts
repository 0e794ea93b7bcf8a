import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { scalarScript } from './scalar-script.js';

export interface ReferencePage {
  /** Where the page is served, e.g. `/docs`; its script is at `<prefix>/js/scalar.js`. */
  prefix: `/${string}`;
  pageTitle: string;
  title: string;
  favicon: string;
  /** The OpenAPI document's address; without it, the document of `@fastify/swagger`. */
  url?: string;
  /** Whether the page keeps the token typed into it in the browser's storage. */
  persistAuth: boolean;
  /** The security scheme the page's request builder offers first. */
  scheme?: string;
  /** A token the page signs its requests in with (the playground's demo key). */
  token?: { scheme: string; value: string };
}

/**
 * The request builder ("Test Request", the playground) when its top bar is narrow (a phone): Scalar
 * then moves the method to a row of its own below the URL, and its sidebar button lies over the
 * start of the URL. Here the method stays before the URL, on one row, and the address bar starts
 * after the button. (`48rem` is where Scalar's own wide layout begins: its `@3xl` container query.)
 */
const NARROW_REQUEST_BUILDER_CSS = `
@container (width < 48rem) {
  .scalar-client .t-app__top-container > .order-last { padding-left: 2.5rem; }
  .scalar-client .address-bar-bg-states > div.hidden { display: flex; }
  .scalar-client .address-bar-bg-states + div > .font-code { display: none; }
}
`;

/** The inline scripts of a page, as CSP hashes. */
function scriptHashes(page: string): string {
  return [...page.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)]
    .map(
      (m) =>
        `'sha256-${createHash('sha256')
          .update(m[1] ?? '')
          .digest('base64')}'`,
    )
    .join(' ');
}

//** Scalar's configuration of a page: every asset from here, no telemetry, agent or other clients. */
function configuration(page: ReferencePage) {
  return {
    _integration: 'fastify',
    title: page.title,
    favicon: page.favicon,
    ...(page.url ? { url: page.url } : {}),
    withDefaultFonts: false,
    customCss: NARROW_REQUEST_BUILDER_CSS,
    telemetry: false,
    hideClientButton: true,
    showDeveloperTools: 'never',
    agent: { disabled: true },
    mcp: { disabled: true },
    persistAuth: page.persistAuth,
    defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
    // The page's own origin, so the request examples are complete commands.
    servers: [{ url: '/' }],
    hiddenClients: {
      c: true,
      clojure: true,
      csharp: true,
      dart: true,
      fsharp: true,
      go: true,
      http: true,
      java: true,
      js: true,
      julia: true,
      kotlin: true,
      objc: true,
      ocaml: true,
      php: true,
      powershell: true,
      r: true,
      ruby: true,
      rust: true,
      swift: true,
      shell: ['httpie', 'wget'],
      node: ['axios', 'ofetch', 'undici'],
      python: ['python3', 'httpx_async', 'aiohttp'],
    },
    ...(page.token
      ? {
          authentication: {
            preferredSecurityScheme: page.token.scheme,
            securitySchemes: { [page.token.scheme]: { token: page.token.value } },
          },
        }
      : page.scheme
        ? { authentication: { preferredSecurityScheme: page.scheme } }
        : {}),
    // Without an address of its own, the page reads the document beside it (`<prefix>/openapi.json`).
    ...(page.url ? {} : { url: './openapi.json' }),
  };
}

/** The page's HTML, rendered by Scalar's own renderer on first use (it is not needed before). */
function pageHtml(page: ReferencePage): () => Promise<string> {
  let html: Promise<string> | undefined;
  return () => {
    html ??= import('@scalar/client-side-rendering').then(({ renderApiReference }) =>
      renderApiReference({
        config: configuration(page) as never,
        cdn: 'js/scalar.js',
        pageTitle: page.pageTitle,
      }),
    );
    return html;
  };
}

/**
 * A Scalar API reference page (`/docs`, `/admin/docs`), every asset served from the package (its
 * single script at `<prefix>/js/scalar.js`, kept compressed once asked for, with caching headers),
 * no CDN, no fonts or proxy from elsewhere. The page's policy allows its own origin only and no
 * `upgrade-insecure-requests`, so it works over plain http on any host name. The inline start-up
 * script is allowed by its hash, computed from the page as served. Nothing of Scalar is in memory
 * before the page is first asked for.
 */
export async function registerReference(app: FastifyInstance, page: ReferencePage) {
  const { prefix } = page;
  const html = pageHtml(page);
  const hidden = { schema: { hide: true }, logLevel: 'warn' } as const;
  app.get(prefix, hidden, (request, reply) => {
    const { pathname } = new URL(request.url, 'http://localhost');
    return reply.redirect(`${pathname}/`, 301);
  });
  app.get(`${prefix}/`, hidden, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(await html()),
  );
  app.get(`${prefix}/js/scalar.js`, hidden, async (request, reply) => {
    const script = await scalarScript();
    reply
      .header('cache-control', 'public, max-age=3600')
      .header('etag', script.etag)
      .header('vary', 'accept-encoding')
      .type('application/javascript; charset=utf-8');
    if (request.headers['if-none-match'] === script.etag) return reply.code(304).send();
    if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? '')))
      return reply.header('content-encoding', 'gzip').send(script.gzipped);
    return reply.send(await script.plain());
  });
  if (!page.url) {
    // The document the page reads, beside it (Scalar's Fastify plugin served it here too).
    app.get(`${prefix}/openapi.json`, hidden, async (_request, reply) =>
      reply
        .type('application/json; charset=utf-8')
        .header('access-control-allow-origin', '*')
        .send(JSON.stringify(app.swagger())),
    );
  }
  const hashes = new Map<string, string>();
  // Every answer passes here, so the test for the prefix comes first and allocates nothing.
  const isPage = (url: string) => {
    if (!url.startsWith(prefix)) return false;
    const next = url.charCodeAt(prefix.length); // after the prefix: the end, "/" or "?"
    return Number.isNaN(next) || next === 47 || next === 63;
  };
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!isPage(request.url)) {
      done(null, payload);
      return;
    }
    if (typeof payload === 'string' && payload.startsWith('<!doctype html>')) {
      let policyHashes = hashes.get(payload);
      if (policyHashes === undefined) {
        policyHashes = scriptHashes(payload);
        hashes.clear();
        hashes.set(payload, policyHashes);
      }
      reply.header(
        'content-security-policy',
        `default-src 'self'; script-src 'self' ${policyHashes}; style-src 'self' 'unsafe-inline'; ` +
          "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; " +
          "base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
      );
    }
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    done(null, payload);
  });
}
