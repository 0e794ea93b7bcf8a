import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { latencyMs } from '../../http/meta.js';
import { refusalError } from '../../http/refusals.js';
import { errorResponses, MetaBase, Nullable } from '../../http/schemas.js';
import { isUuid } from '../../lib/ids.js';
import { principalOf, type RequireKey } from '../keys/index.js';
import { pastResponseDescription } from './schemas.js';
import { type AuditsService, auditNotFound } from './service.js';

const AuditRecord = Type.Object({
  request_id: Type.String({ description: 'The `meta.request_id` of the original response.' }),
  endpoint: Type.Union([
    Type.Literal('validate'),
    Type.Literal('decide'),
    Type.Literal('validate_batch'),
    Type.Literal('confirm'),
    Type.Literal('monitor_check'),
    Type.Literal('peppol'),
    Type.Literal('eori'),
    Type.Literal('eori_batch'),
  ]),
  response: Type.Object(
    {},
    { additionalProperties: true, description: 'The original response envelope, byte for byte.' },
  ),
  created_at: Type.String({ format: 'date-time' }),
  expires_at: Type.String({ format: 'date-time' }),
  request_body: Type.Optional(
    Nullable(Type.Unknown({ description: 'The original inputs (query or JSON body).' })),
  ),
  latency_ms: Nullable(Type.Integer()),
  status_code: Nullable(Type.Integer()),
  valid: Nullable(Type.Boolean()),
  delivered: Type.Boolean({
    description:
      'False when the response was recorded but could not be written to the client (its connection closed first); the client never received it.',
  }),
});

export function auditsRoutes(deps: { audits: AuditsService; requireKey: RequireKey }) {
  const { audits, requireKey } = deps;
  return async function register(fastify: FastifyInstance) {
    // Handlers get their request parts typed from the route's TypeBox schemas.
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/v1/audits/:request_id',
      {
        onRequest: requireKey('audits'),
        schema: {
          tags: ['Audit records'],
          summary: 'Retrieve a past response',
          description: pastResponseDescription,
          security: [{ apiKey: [] }],
          params: Type.Object({ request_id: Type.String({ maxLength: 64 }) }),
          response: {
            200: Type.Object({ data: AuditRecord, meta: Type.Object(MetaBase) }),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const { request_id } = request.params;
        // Request ids are UUIDs: anything else is unknown without asking the database (PostgreSQL
        // refuses text with a NUL byte outright).
        if (!isUuid(request_id)) throw refusalError(auditNotFound());
        const found = await audits.find(principal, request_id);
        if (found.kind === 'refused') throw refusalError(found);
        const record = found.audit;
        // The stored response is spliced in as stored, so it is byte-for-byte what the client got.
        const body =
          `{"data":{"request_id":${JSON.stringify(record.requestId)},"endpoint":${JSON.stringify(record.endpoint)},` +
          `"response":${record.responseJson},"created_at":"${record.createdAt}","expires_at":"${record.expiresAt}",` +
          `"request_body":${record.requestBodyJson ?? 'null'},"latency_ms":${record.latencyMs ?? 'null'},` +
          `"status_code":${record.statusCode ?? 'null'},"valid":${record.valid ?? 'null'},"delivered":${record.delivered}},` +
          `"meta":{"request_id":"${request.id}","latency_ms":${latencyMs(reply)}}}`;
        return reply.type('application/json; charset=utf-8').send(body);
      },
    );
  };
}
