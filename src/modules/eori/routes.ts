import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { clientSignal } from '../../http/client-signal.js';
import { refusalError } from '../../http/refusals.js';
import { Envelope, errorResponses } from '../../http/schemas.js';
import { refusal } from '../../lib/refusal.js';
import { principalOf, type RequireKey } from '../keys/index.js';
import type { SendRecorded } from '../outbox/index.js';
import type { EoriAnswersRepository } from './repository.js';
import {
  BatchBody,
  BatchData,
  BatchMetaFields,
  CacheQuery,
  checkEoriBatchDescription,
  checkOneEoriDescription,
  EoriMetaFields,
} from './schemas.js';
import { EORI_BATCH_LIMIT, type EoriBatchOutcome, type EoriCheckService } from './service.js';
import type { EoriOutcome } from './types.js';

const Params = Type.Object({
  number: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'The EORI number, written any common way (`de 1234-5678.9012 345`, `GB123456789000`).',
    examples: ['DE100000000000001'],
  }),
});

/** The refusal of a number without an answer: malformed (400) or its service unavailable (502). */
function eoriRefusal(outcome: Exclude<EoriOutcome, { kind: 'ok' }>) {
  if (outcome.kind === 'invalid_format')
    return refusal('invalid_format', outcome.message, { reason: outcome.reason });
  return refusal(
    'registry_unavailable',
    outcome.message,
    { source: outcome.source, retry_after_seconds: outcome.retryAfterSeconds },
    outcome.retryAfterSeconds,
  );
}

/** The batch `meta`: cached when every answer was stored, the worst status, the counts per service. */
function batchMeta(sources: EoriBatchOutcome['sources']) {
  let live = 0;
  let cached = 0;
  let degraded = 0;
  for (const counts of Object.values(sources)) {
    live += counts.live;
    cached += counts.cached;
    degraded += counts.degraded;
  }
  return {
    cached: cached + degraded > 0 && live === 0,
    source_status:
      degraded > 0 ? ('degraded' as const) : cached > 0 ? ('cached' as const) : ('live' as const),
    sources,
  };
}

export function eoriRoutes(deps: {
  eori: EoriCheckService;
  eoriAnswers: Pick<EoriAnswersRepository, 'upsertMany'>;
  requireKey: RequireKey;
  sendRecorded: SendRecorded;
}) {
  const { eori, eoriAnswers, requireKey, sendRecorded } = deps;
  return async function register(fastify: FastifyInstance) {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/v1/eori/:number',
      {
        onRequest: requireKey('eori'),
        schema: {
          tags: ['EORI'],
          summary: 'Check one EORI number',
          description: checkOneEoriDescription,
          security: [{ apiKey: [] }],
          params: Params,
          querystring: CacheQuery,
          response: { 200: Envelope(Type.Ref('EoriData'), EoriMetaFields), ...errorResponses },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const outcome = await eori.check(request.params.number, principal, {
          useCache: request.query.cache !== 'false',
          signal: () => clientSignal(request, reply),
        });
        if (outcome.kind !== 'ok') throw refusalError(eoriRefusal(outcome));
        const fresh = outcome.fresh;
        return sendRecorded({
          request,
          reply,
          principal,
          endpoint: 'eori',
          data: outcome.data,
          meta: { ...outcome.meta },
          requestBody: { number: request.params.number, ...request.query },
          valid: outcome.data.valid,
          ...(fresh ? { own: (trx) => eoriAnswers.upsertMany([fresh], trx) } : {}),
        });
      },
    );

    app.post(
      '/v1/eori/batch',
      {
        onRequest: requireKey('eori'),
        schema: {
          tags: ['EORI'],
          summary: 'Check a batch of EORI numbers',
          description: checkEoriBatchDescription,
          security: [{ apiKey: [] }],
          querystring: CacheQuery,
          body: BatchBody,
          response: { 200: Envelope(BatchData, BatchMetaFields), ...errorResponses },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const numbers = request.body.eori_numbers;
        if (numbers.length > EORI_BATCH_LIMIT) {
          throw refusalError(
            refusal(
              'batch_too_large',
              `A batch holds at most ${EORI_BATCH_LIMIT} EORI numbers; this one has ${numbers.length}. Split it.`,
              { max: EORI_BATCH_LIMIT, got: numbers.length },
            ),
          );
        }
        const checked = await eori.checkMany(numbers, principal, {
          useCache: request.query.cache !== 'false',
          signal: () => clientSignal(request, reply),
        });
        const fresh = checked.fresh;
        return sendRecorded({
          request,
          reply,
          principal,
          endpoint: 'eori_batch',
          data: { summary: checked.summary, results: checked.results },
          meta: batchMeta(checked.sources),
          requestBody: request.body,
          valid: null,
          ...(fresh.length > 0 ? { own: (trx) => eoriAnswers.upsertMany(fresh, trx) } : {}),
        });
      },
    );
  };
}
