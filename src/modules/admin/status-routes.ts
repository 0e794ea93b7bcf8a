import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { baseMeta } from '../../http/meta.js';
import { Envelope, errorResponses } from '../../http/schemas.js';
import { StatusData } from '../status/index.js';
import { actorOf, type RequireAdmin } from './auth.js';

const Me = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  role: Type.Union([Type.Literal('admin'), Type.Literal('read')], {
    description: '`admin`: reads and writes; `read`: reads only.',
  }),
});

const hidden = { hide: true, security: [{ adminKey: [] }] };

/**
 * `GET /admin/v1/me` (the admin key making the request, so a client knows what it may do) and
 * `GET /admin/v1/status` (the registries and the rates sync, as `GET /v1/status` tells them).
 */
export function adminStatusRoutes(deps: {
  requireAdmin: RequireAdmin;
  status: () => Promise<Static<typeof StatusData>>;
}) {
  const { requireAdmin, status } = deps;
  return async function register(fastify: FastifyInstance) {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/admin/v1/me',
      {
        onRequest: requireAdmin('read'),
        schema: {
          ...hidden,
          tags: ['Admin keys'],
          summary: 'The admin key making the request: its id, name and role',
          response: { 200: Envelope(Me), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { id, name, role } = actorOf(request);
        return reply.send({ data: { id, name, role }, meta: baseMeta(request, reply) });
      },
    );

    app.get(
      '/admin/v1/status',
      {
        onRequest: requireAdmin('read'),
        schema: {
          ...hidden,
          tags: ['Status'],
          summary: 'Registry status and the rates sync, as `GET /v1/status` answers them',
          response: { 200: Envelope(StatusData), ...errorResponses },
        },
      },
      async (request, reply) => {
        reply.header('cache-control', 'no-store');
        return reply.send({ data: await status(), meta: baseMeta(request, reply) });
      },
    );
  };
}
