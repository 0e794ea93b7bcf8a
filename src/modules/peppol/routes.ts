import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { clientSignal } from '../../http/client-signal.js';
import { refusalError } from '../../http/refusals.js';
import { Envelope, errorResponses } from '../../http/schemas.js';
import { principalOf, type RequireKey } from '../keys/index.js';
import type { SendRecorded } from '../outbox/index.js';
import { peppolRefusal } from './refusals.js';
import { PeppolMetaFields, peppolLookupDescription } from './schemas.js';
import type { PeppolPort } from './types.js';

const Params = Type.Object({
  identifier: Type.String({
    minLength: 1,
    maxLength: 200,
    description:
      'A VAT number with its country prefix (`BE0677424046`), a participant identifier `ICD:value` (`0208:0677424046`), or `iso6523-actorid-upis::ICD:value`.',
    examples: ['BE0999000030'],
  }),
});

const Query = Type.Object(
  {
    cache: Type.Optional(
      Type.Unsafe<'true' | 'false'>({
        type: 'string',
        enum: ['true', 'false'],
        description: '`false` asks the SML and the SMPs again.',
      }),
    ),
  },
  { description: 'Unknown query parameters are ignored.' },
);

export function peppolRoutes(deps: {
  peppol: PeppolPort;
  requireKey: RequireKey;
  sendRecorded: SendRecorded;
}) {
  const { peppol, requireKey, sendRecorded } = deps;
  return async function register(fastify: FastifyInstance) {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/v1/peppol/:identifier',
      {
        onRequest: requireKey('peppol'),
        schema: {
          tags: ['Peppol'],
          summary: 'Can this company receive e-invoices over Peppol?',
          description: peppolLookupDescription,
          security: [{ apiKey: [] }],
          params: Params,
          querystring: Query,
          response: { 200: Envelope(Type.Ref('PeppolData'), PeppolMetaFields), ...errorResponses },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const outcome = await peppol.lookup(
          {
            identifier: request.params.identifier,
            useCache: request.query.cache !== 'false',
            signal: clientSignal(request, reply),
          },
          principal,
        );
        if (outcome.kind !== 'ok') throw refusalError(peppolRefusal(outcome));
        return sendRecorded({
          request,
          reply,
          principal,
          endpoint: 'peppol',
          data: outcome.data,
          meta: { ...outcome.meta },
          requestBody: { identifier: request.params.identifier, ...request.query },
          valid: outcome.data.reachable,
        });
      },
    );
  };
}
