import type { FastifyInstance, FastifySchema } from 'fastify';

interface AdminRoute {
  method: string;
  url: string;
  schema: FastifySchema;
}

/** A schema as plain JSON, its `Type.Ref('ErrorEnvelope')` pointed at the components. */
function plain(schema: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema), (key, value) =>
    key === '$ref' && value === 'ErrorEnvelope' ? '#/components/schemas/ErrorEnvelope' : value,
  ) as Record<string, unknown>;
}

function parameters(schema: unknown, where: 'path' | 'query') {
  if (!schema) return [];
  const object = plain(schema) as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(object.properties ?? {}).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || (object.required ?? []).includes(name),
    schema: property,
  }));
}

/** The OpenAPI 3.1 document of the admin API, built from its routes' schemas. */
export function adminOpenApi(routes: readonly AdminRoute[], version: string, errorEnvelope: unknown) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.url.replace(/:([A-Za-z_]+)/g, '{$1}');
    const schema = route.schema as FastifySchema & { summary?: string; tags?: string[] };
    const responses = Object.fromEntries(
      Object.entries((schema.response ?? {}) as Record<string, unknown>).map(([status, body]) => [
        status.toUpperCase(),
        {
          description: status.startsWith('2') ? 'Success' : 'Error',
          content: { 'application/json': { schema: plain(body) } },
        },
      ]),
    );
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = {
      summary: schema.summary,
      tags: schema.tags,
      security: [{ adminKey: [] }],
      parameters: [...parameters(schema.params, 'path'), ...parameters(schema.querystring, 'query')],
      ...(schema.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: plain(schema.body) } } } }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'openvat admin API',
      version,
      description:
        'Accounts, API keys and their lifecycle, usage and the audit log, for operators. Authenticate with `Authorization: Bearer svc_admin_…`; a `read` key may only read. Successes are `{ data, meta }`, errors `{ error: { code, message }, meta }`, lists are paged with `meta.next_cursor`.',
    },
    components: {
      securitySchemes: {
        adminKey: { type: 'http', scheme: 'bearer', description: 'An admin key: `svc_admin_…`.' },
      },
      schemas: { ErrorEnvelope: plain(errorEnvelope) },
    },
    paths,
  };
}

/** Serves `/admin/openapi.json` (public, like `/openapi.json`). */
export function adminOpenApiRoute(version: string, errorEnvelope: unknown) {
  return async function register(app: FastifyInstance) {
    let document: string | null = null;
    app.get('/admin/openapi.json', { schema: { hide: true } }, async (_request, reply) => {
      document ??= JSON.stringify(
        adminOpenApi(
          app.routeTable.filter((r) => r.url.startsWith('/admin/v1/')),
          version,
          errorEnvelope,
        ),
      );
      return reply.type('application/json; charset=utf-8').send(document);
    });
  };
}
