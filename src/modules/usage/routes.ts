import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../http/api-error.js';
import { baseMeta } from '../../http/meta.js';
import { Envelope, errorResponses, WholeNumberQuery, wholeNumberMessage } from '../../http/schemas.js';
import { principalOf, type RequireKey } from '../keys/index.js';
import { usageReportDescription } from './schemas.js';
import type { UsageService } from './service.js';

const Count = {
  requests: Type.Integer({ description: 'Requests answered.' }),
  errors: Type.Integer({ description: 'Of those, answers with a status of 400 or more.' }),
};

const UsageReport = Type.Object({
  key_id: Type.String(),
  plan: Type.Union([
    Type.Literal('free'),
    Type.Literal('starter'),
    Type.Literal('pro'),
    Type.Literal('business'),
  ]),
  mode: Type.Union([Type.Literal('live'), Type.Literal('test')]),
  from: Type.String({ format: 'date', description: 'First UTC day of the report.' }),
  to: Type.String({ format: 'date', description: 'Last UTC day of the report: today.' }),
  requests_per_minute: Type.Integer({ description: "The key's rate limit." }),
  totals: Type.Object(Count),
  operations: Type.Array(
    Type.Object({
      operation: Type.String({
        description: '`validate`, `batch`, `decide`, `confirm`, `audits`, `webhooks` or `usage`.',
      }),
      ...Count,
    }),
    { description: 'Operations used in the period, most requested first.' },
  ),
  daily: Type.Array(Type.Object({ date: Type.String({ format: 'date' }), ...Count }), {
    description: 'Every day of the period, oldest first, days without requests included.',
  }),
});

/** The days a report covers. */
const DAYS = { min: 1, max: 366 };

export function usageRoutes(deps: { usage: UsageService; requireKey: RequireKey }) {
  const { usage, requireKey } = deps;
  return async function register(fastify: FastifyInstance) {
    // Handlers get their request parts typed from the route's TypeBox schemas.
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/v1/usage',
      {
        onRequest: requireKey('usage'),
        schema: {
          tags: ['Usage'],
          summary: "This key's requests per day and operation",
          description: usageReportDescription,
          security: [{ apiKey: [] }],
          querystring: Type.Object(
            {
              days: Type.Optional(
                WholeNumberQuery({ ...DAYS, digits: 3, description: '1–366, default 30.' }),
              ),
            },
            { additionalProperties: false },
          ),
          response: { 200: Envelope(UsageReport), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { days: raw } = request.query;
        const days = raw === undefined ? 30 : Number(raw);
        if (days < DAYS.min || days > DAYS.max) throw errors.invalidRequest(wholeNumberMessage('days', DAYS));
        const data = await usage.report(principalOf(request), days);
        return reply.send({ data, meta: baseMeta(request, reply) });
      },
    );
  };
}
