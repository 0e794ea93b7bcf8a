import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import {
  PLAYGROUND_JOB_LIMIT,
  PLAYGROUND_KEY,
  PLAYGROUND_LIMIT_PER_HOUR,
  type Playground,
} from '../modules/playground/playground.js';

export interface OpenApiOptions {
  /** Extra Markdown appended to the API description (e.g. the test-mode magic numbers). */
  description?: string;
  /** When set, `/docs` signs its requests in with the playground's demo key. */
  playground?: Playground | null;
}

function playgroundIntro(): string {
  return `**Playground.** This page is signed in with the demo key \`${PLAYGROUND_KEY}\`, so *Try it out*
works at once. It is a test-mode key (deterministic answers for the magic numbers listed under
\`GET /v1/validate\`, no registry calls), shared by every visitor, limited to ${PLAYGROUND_LIMIT_PER_HOUR} requests per
hour per IP address (rates included); it cannot manage webhooks or read a usage report, and its
batch jobs hold at most ${PLAYGROUND_JOB_LIMIT} numbers; its audit records and confirmations are served for 24 hours only. Use **Authorize** to replace it with a key of your own.`;
}

/**
 * The script `/docs` loads after Swagger UI's own: it wraps `SwaggerUIBundle` so that, once the
 * document is loaded, the demo key is authorised unless the visitor has authorised a key of their
 * own, and the public rates requests carry the demo key too while it is the authorised one (they
 * count against its hourly budget).
 */
function playgroundScript(): string {
  return `(function () {
  var key = ${JSON.stringify(PLAYGROUND_KEY)};
  var original = window.SwaggerUIBundle;
  if (!original) return;
  function current(ui) {
    var value = ui && ui.authSelectors.authorized().getIn(['apiKey', 'value']);
    return typeof value === 'string' ? value : null;
  }
  window.SwaggerUIBundle = Object.assign(function (config) {
    var ui = null;
    var intercept = config.requestInterceptor;
    config.requestInterceptor = function (request) {
      var headers = request.headers || (request.headers = {});
      if (!headers.Authorization && !headers.authorization && current(ui) === key && request.url.indexOf('/v1/rates') !== -1) {
        headers.Authorization = 'Bearer ' + key;
      }
      return intercept ? intercept(request) : request;
    };
    var complete = config.onComplete;
    config.onComplete = function () {
      if (ui && current(ui) === null) ui.preauthorizeApiKey('apiKey', key);
      if (complete) complete();
    };
    ui = original(config);
    window.ui = ui;
    return ui;
  }, original);
})();
`;
}

const INTRO = `Self-hostable VAT validation: EU VIES, UK HMRC, Swiss and Norwegian registries, VAT decisions,
German qualified confirmations, audit records, signed webhooks and VAT rates.

Every success response is \`{ data, meta }\`; every error is \`{ error: { code, message }, meta }\`.
Every response carries \`meta.request_id\` (UUID v7) and the \`Service-Request-Id\` header.

Authenticate with \`Authorization: Bearer svc_live_…\` (live registries) or \`svc_test_…\` (test mode:
deterministic answers, no network calls).`;

/** OpenAPI 3.1 generated from the route schemas, served at /openapi.json, and the reference UI at /docs. */
export async function registerOpenApi(app: FastifyInstance, options: OpenApiOptions = {}) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'openvat',
        version: '1.0.0',
        description: [INTRO, options.playground ? playgroundIntro() : null, options.description ?? null]
          .filter((part) => part !== null)
          .join('\n\n'),
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key: `svc_live_…` or `svc_test_…`.',
          },
        },
      },
      tags: [
        { name: 'Validation', description: 'Check VAT numbers against the registries.' },
        { name: 'Decide', description: 'The VAT treatment of a sale: reverse charge, OSS, exports.' },
        {
          name: 'Qualified confirmations',
          description: 'German qualified confirmations (eVatR), kept 10 years.',
        },
        { name: 'Audit records', description: 'Past responses, byte for byte.' },
        { name: 'Webhooks', description: 'Signed event delivery from a durable queue.' },
        { name: 'Rates', description: 'VAT rates reference data (public).' },
        { name: 'Usage', description: "The key's own requests per day and operation." },
        { name: 'System', description: 'Health and readiness.' },
      ],
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`),
    },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: true, persistAuthorization: true },
    staticCSP: true,
    ...(options.playground
      ? { theme: { js: [{ filename: 'playground.js', content: playgroundScript() }] } }
      : {}),
  });
  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) => {
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(app.swagger()));
  });
}
