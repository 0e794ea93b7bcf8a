import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

export interface OpenApiOptions {
  /** Extra Markdown appended to the API description (e.g. the test-mode magic numbers). */
  description?: string;
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
        description: options.description ? `${INTRO}\n\n${options.description}` : INTRO,
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
  });
  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) => {
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(app.swagger()));
  });
}
