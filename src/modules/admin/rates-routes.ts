import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { baseMeta } from '../../http/meta.js';
import { refusalError } from '../../http/refusals.js';
import { Envelope, errorResponses, Nullable } from '../../http/schemas.js';
import type { RatesUpdates } from '../rates/index.js';
import { actorOf, type RequireAdmin } from './auth.js';
import { Id, Query } from './schemas.js';
import type { Actor, AdminService } from './service.js';

const STATUSES = ['held', 'applied', 'rejected', 'superseded', 'withdrawn'] as const;

const Rates = Type.Object({
  standard_rate: Type.Number(),
  reduced_rates: Type.Array(Type.Number()),
  super_reduced_rate: Nullable(Type.Number()),
  parking_rate: Nullable(Type.Number()),
});

const RateChange = Type.Object({
  id: Type.String({ format: 'uuid' }),
  country_code: Type.String({ description: 'Lower case, as in `/v1/rates`.' }),
  valid_from: Type.String({ format: 'date', description: 'First day of the rates.' }),
  rates: Nullable(Rates, { description: 'Null: TEDB had no usable rates (the country would disappear).' }),
  source: Type.String({ description: '`tedb`.' }),
  learnt_at: Type.String({ format: 'date-time' }),
  status: Type.Union(
    STATUSES.map((s) => Type.Literal(s)),
    {
      description:
        '`held` (waits for an operator), `applied` (by the sync, or released by an operator: `decided_at` set), `rejected`, `superseded`, `withdrawn`.',
    },
  ),
  reason: Nullable(Type.String({ description: 'Why it was held: every rule it breaks.' })),
  decided_at: Nullable(Type.String({ format: 'date-time' })),
  decided_by: Nullable(
    Type.String({
      description:
        'Who decided: `admin key NAME (ID)`, `cli (USER@HOST)`, or `sync` for a change a later sync superseded or withdrew.',
    }),
  ),
});

const hidden = { hide: true, security: [{ adminKey: [] }] };

/** How a change's `decided_by` names the operator of an admin request. */
function operatorName(actor: Actor): string {
  return `admin key ${actor.name} (${actor.id})`;
}

/**
 * The changes the rates sync learnt, and an operator's decisions on the held ones, under
 * `/admin/v1/rates/changes`: `accept` releases a change, `reject` sets it aside; each decision is
 * written to the admin audit log with the change.
 */
export function adminRatesRoutes(deps: {
  requireAdmin: RequireAdmin;
  admin: Pick<AdminService, 'recorder'>;
  rates: Pick<RatesUpdates, 'changes' | 'decide'>;
}) {
  const { requireAdmin, admin, rates } = deps;
  return async function register(fastify: FastifyInstance) {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/admin/v1/rates/changes',
      {
        onRequest: requireAdmin('read'),
        schema: {
          ...hidden,
          tags: ['Rates'],
          summary: 'Changes the rates sync learnt; the held ones by default',
          querystring: Query({
            status: Type.Optional(
              Type.Union(
                STATUSES.map((s) => Type.Literal(s)),
                { description: 'Default `held`.' },
              ),
            ),
          }),
          response: { 200: Envelope(Type.Array(RateChange)), ...errorResponses },
        },
      },
      async (request, reply) => {
        const data = await rates.changes([request.query.status ?? 'held']);
        return reply.send({ data, meta: baseMeta(request, reply) });
      },
    );

    for (const decision of ['accept', 'reject'] as const) {
      app.post(
        `/admin/v1/rates/changes/:id/${decision}`,
        {
          onRequest: requireAdmin('admin'),
          schema: {
            ...hidden,
            tags: ['Rates'],
            summary:
              decision === 'accept'
                ? 'Release a held change: served by every instance within a minute'
                : 'Reject a held change: not served, and not held again',
            params: Id,
            response: { 200: Envelope(RateChange), ...errorResponses },
          },
        },
        async (request, reply) => {
          const actor = actorOf(request);
          const { id } = request.params;
          const outcome = await rates.decide(id, decision, {
            by: operatorName(actor),
            record: admin.recorder(actor),
          });
          if (outcome.kind !== 'ok') throw refusalError(outcome);
          return reply.send({ data: outcome.change, meta: baseMeta(request, reply) });
        },
      );
    }
  };
}
