import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { type ApiError, errors } from './api-error.js';
import { PACKAGE } from './package.js';
import { registerReference } from './reference-page.js';

export interface OpenApiOptions {
  /** Extra Markdown appended to the API description (e.g. the test-mode magic numbers). */
  description?: string;
  /** When set, `/docs` signs its requests in with this demo key, and says so with `intro`. */
  playground?: { key: string; intro: string } | null;
}

const INTRO = `Self-hostable VAT validation: EU VIES, UK HMRC, Swiss and Norwegian registries, VAT decisions,
German qualified confirmations, audit records, signed webhooks and VAT rates.

Every success response is \`{ data, meta }\` (except \`POST /v1/webhooks\` and \`POST /v1/webhooks/{id}/test\`, which answer without the envelope); every error is \`{ error: { code, message }, meta }\`.
Every response carries \`meta.request_id\` (UUID v7) and the \`Service-Request-Id\` header (the same id also in \`X-Request-Id\`).

Authenticate with \`Authorization: Bearer svc_live_…\` (live registries) or \`svc_test_…\` (test mode:
deterministic answers, no network calls).`;

/** OpenAPI 3.1 generated from the route schemas, served at /openapi.json, and the reference UI at /docs. */
export async function registerOpenApi(app: FastifyInstance, options: OpenApiOptions = {}) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: PACKAGE.name,
        version: PACKAGE.version,
        description: [INTRO, options.playground?.intro ?? null, options.description ?? null]
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
        {
          name: 'Monitoring',
          description: 'VAT numbers re-checked on a schedule; changes sent as webhook events.',
        },
        { name: 'Rates', description: 'VAT rates reference data (public).' },
        { name: 'Usage', description: "The key's own requests per day and operation." },
        { name: 'System', description: 'Health and readiness.' },
      ],
    },
    transformObject: (documentObject) => withErrorExamples(documentObject),
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`),
    },
  });
  await registerReference(app, {
    prefix: '/docs',
    pageTitle: `${PACKAGE.name} ${PACKAGE.version} API reference`,
    title: `${PACKAGE.name} API`,
    favicon: '/favicon.svg',
    persistAuth: true,
    ...(options.playground ? { token: { scheme: 'apiKey', value: options.playground.key } } : {}),
  });
  app.get('/', { schema: { hide: true } }, (_request, reply) => reply.redirect('/docs/', 302));
  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) => {
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(app.swagger()));
  });
}

const EXAMPLE_REQUEST_ID = '0193a3b2-7c4e-7a51-9d0e-6f1a2b3c4d5e';

function example(error: ApiError) {
  return {
    summary: `${error.statusCode} ${error.code}`,
    value: {
      error: {
        code: error.code,
        message: error.message,
        ...(error.details ? { details: error.details } : {}),
      },
      meta: { request_id: EXAMPLE_REQUEST_ID, latency_ms: 1 },
    },
  };
}

/**
 * Real examples of the error envelope per status class, written by the same builders the API uses,
 * so the reference shows the codes and messages a client will see instead of a generated
 * `additionalProp1`.
 */
const ERROR_EXAMPLES: Record<'4XX' | '5XX', Record<string, ReturnType<typeof example>>> = {
  '4XX': {
    invalid_format: example(
      errors.invalidRequest('querystring.vat_number: must have required property', { field: 'vat_number' }),
    ),
    unauthorized: example(errors.unauthorized()),
    plan_required: example(errors.planRequired('Qualified confirmations', ['pro', 'business'])),
    not_found: example(errors.notFound()),
    rate_limited: example(errors.rateLimited(12)),
  },
  '5XX': {
    registry_unavailable: {
      summary: '502 registry_unavailable',
      value: {
        error: {
          code: 'registry_unavailable',
          message: "No answer from VIES for DE: the member state's VAT registry is not replying to VIES.",
          details: { source: 'vies', retry_after_seconds: 60 },
        },
        meta: { request_id: EXAMPLE_REQUEST_ID, latency_ms: 4022 },
      },
    },
    internal_error: {
      summary: '500 internal_error',
      value: {
        error: { code: 'internal_error', message: 'Something went wrong on our side; it has been logged.' },
        meta: { request_id: EXAMPLE_REQUEST_ID, latency_ms: 2 },
      },
    },
  },
};

type OperationResponses = Record<string, { content?: Record<string, { examples?: unknown }> }>;

// biome-ignore lint/suspicious/noExplicitAny: @fastify/swagger's document types differ between OpenAPI versions.
function withErrorExamples(documentObject: { openapiObject?: any; swaggerObject?: any }): any {
  const doc = (documentObject.openapiObject ?? documentObject.swaggerObject) as {
    paths?: Record<string, Record<string, { responses?: OperationResponses }>>;
  };
  for (const item of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(item)) {
      for (const [status, response] of Object.entries(operation?.responses ?? {})) {
        const key = status.toUpperCase() as '4XX' | '5XX';
        const media = response.content?.['application/json'];
        if (!media || !ERROR_EXAMPLES[key]) continue;
        media.examples = ERROR_EXAMPLES[key];
        (response as { description?: string }).description =
          key === '4XX'
            ? 'A client error: the request cannot be answered as sent.'
            : 'A server or registry error.';
      }
    }
  }
  return doc;
}
