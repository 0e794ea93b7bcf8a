import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../http/api-error.js';
import { baseMeta } from '../../http/meta.js';
import { refusalError } from '../../http/refusals.js';
import { Envelope, errorResponses, Literals } from '../../http/schemas.js';
import { CLAIM_MAX_LENGTH } from '../identity-match/index.js';
import { principalOf, type RequireKey } from '../keys/index.js';
import type { SendRecorded } from '../outbox/index.js';
import { PEPPOL_SCOPE_MESSAGE, parseInclude, peppolAllowed } from '../peppol/index.js';
import { FallbackMetaSchema, REGISTRY_SOURCES, SOURCE_STATUSES } from '../validation/index.js';
import { aBatchJobDescription, validateABatchOfVatNumbersDescription } from './schemas.js';
import { ASYNC_BATCH_LIMIT, type BatchService, batchItems, rollup, SYNC_BATCH_LIMIT } from './service.js';

const ClaimField = (maxLength: number, description: string) =>
  Type.Optional(Type.String({ maxLength, description }));

/** A number with the company fields the customer claims, compared as `GET /v1/validate` does. */
const ItemWithClaim = Type.Object(
  {
    vat_number: Type.String({ minLength: 1, description: 'The VAT number, written any common way.' }),
    company_name: ClaimField(CLAIM_MAX_LENGTH.name, 'Compared with the registered name.'),
    company_street: ClaimField(CLAIM_MAX_LENGTH.street, 'Compared with the registered street and number.'),
    company_postcode: ClaimField(CLAIM_MAX_LENGTH.postcode, 'Compared with the registered postcode.'),
    company_city: ClaimField(CLAIM_MAX_LENGTH.city, 'Compared with the registered town.'),
  },
  { description: 'A number with the company it should belong to: its result gains `data.match`.' },
);

const Body = Type.Object(
  {
    vat_numbers: Type.Array(Type.Union([Type.String(), ItemWithClaim]), {
      minItems: 1,
      description: `The VAT numbers, written any common way, each a string or an object \`{ vat_number, company_name, company_street, company_postcode, company_city }\`. At most ${SYNC_BATCH_LIMIT} synchronously, ${ASYNC_BATCH_LIMIT.toLocaleString('en')} with \`"async": true\`; more is \`400 batch_too_large\`.`,
    }),
    requester_vat_number: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'Your own VAT number: every item is then a live call with a consultation number.',
      }),
    ),
    include: Type.Optional(
      Type.Array(Type.String(), {
        maxItems: 8,
        description:
          'Parts to add to each successful item: `["peppol"]` adds `data.peppol` (can the company receive e-invoices over Peppol), as `GET /v1/validate?include=peppol` does. A Peppol outage never fails an item: its part is then `{ "error": … }`. An unknown value is `400 invalid_format`.',
      }),
    ),
    async: Type.Optional(
      Type.Boolean({
        description:
          'Queue a durable batch job instead: `202` with the job, then poll `GET /v1/validate/batch/{id}`.',
      }),
    ),
  },
  // Unknown fields are ignored, not refused, as by the hosted contract.
  { description: 'Unknown fields are ignored.' },
);

const ItemError = Type.Object({
  code: Type.Union(
    [
      Type.Literal('invalid_format'),
      Type.Literal('country_unsupported'),
      Type.Literal('registry_unavailable'),
    ],
    {
      description:
        'Why this number has no answer: `invalid_format` (malformed, or the registry refused the requester), `country_unsupported`, `registry_unavailable` (retry later).',
    },
  ),
  message: Type.String(),
});

const ItemFallback = Type.Object(
  {
    source: Literals(REGISTRY_SOURCES),
    source_status: Type.Literal('fallback'),
    fallback: FallbackMetaSchema,
  },
  {
    description:
      'Only on an item a national register answered because VIES could not (`data.registration_scope: "domestic"`): the register and its answer, as a validation\'s `meta` has them.',
  },
);

const ItemResult = Type.Union([
  Type.Object({
    ok: Type.Literal(true),
    data: Type.Ref('ValidationData'),
    meta: Type.Optional(ItemFallback),
  }),
  Type.Object({ ok: Type.Literal(false), error: ItemError }),
]);

const Summary = Type.Object({
  total: Type.Integer(),
  successful: Type.Integer(),
  failed: Type.Integer(),
});

const Sources = Type.Record(
  Type.String(),
  Type.Object({
    live: Type.Integer(),
    cached: Type.Integer(),
    degraded: Type.Integer(),
    fallback: Type.Optional(
      Type.Integer({ description: 'Answers of a national register because VIES could not answer.' }),
    ),
  }),
  { description: 'Successful answers per registry and `source_status`.' },
);

const BatchData = Type.Object({
  summary: Summary,
  results: Type.Array(ItemResult, { description: 'One per input number, in input order.' }),
});

const JobData = Type.Object({
  id: Type.String({ format: 'uuid' }),
  status: Type.Union([
    Type.Literal('queued'),
    Type.Literal('running'),
    Type.Literal('completed'),
    Type.Literal('cancelled'),
  ]),
  total: Type.Integer(),
  done: Type.Integer({ description: 'Items finished, successful or not.' }),
  failed: Type.Integer({ description: 'Finished items with an error.' }),
  created_at: Type.String({ format: 'date-time' }),
  completed_at: Type.Optional(Type.String({ format: 'date-time' })),
  cancelled_at: Type.Optional(Type.String({ format: 'date-time' })),
  cancel_reason: Type.Optional(
    Type.Object(
      {
        code: Type.Union([
          Type.Literal('key_revoked'),
          Type.Literal('key_expired'),
          Type.Literal('key_rolled'),
          Type.Literal('account_disabled'),
        ]),
        message: Type.String(),
      },
      {
        description:
          'Why a `cancelled` job stopped: the key that created it may no longer be used — `key_revoked`, `key_expired`, `key_rolled` (its overlap ended) or `account_disabled`. Its remaining items were not validated and no `batch.completed` event was sent.',
      },
    ),
  ),
  summary: Type.Optional(Summary),
  results: Type.Optional(
    Type.Array(ItemResult, { description: 'Once completed: one per input number, in input order.' }),
  ),
});

const Params = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);

export function batchRoutes(deps: {
  batch: BatchService;
  requireKey: RequireKey;
  sendRecorded: SendRecorded;
  /** Request body limit of the batch endpoint (10,000 numbers must fit). */
  bodyLimit: number;
}) {
  const { batch, requireKey, sendRecorded } = deps;
  return async function register(fastify: FastifyInstance) {
    // Handlers get their request parts typed from the route's TypeBox schemas.
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    app.post(
      '/v1/validate/batch',
      {
        onRequest: requireKey('batch'),
        bodyLimit: deps.bodyLimit,
        schema: {
          tags: ['Validation'],
          summary: 'Validate a batch of VAT numbers',
          description: validateABatchOfVatNumbersDescription,
          security: [{ apiKey: [] }],
          body: Body,
          response: {
            200: Envelope(BatchData, {
              cached: Type.Boolean({ description: 'True when every answer was a stored one (none live).' }),
              source: Literals(REGISTRY_SOURCES, {
                description: 'The registry that gave the most answers (`vies` when none answered).',
              }),
              source_status: Literals(SOURCE_STATUSES, {
                description:
                  'The worst status among the answers: `degraded` over `fallback` over `cached` over `live`.',
              }),
              sources: Sources,
            }),
            202: Envelope(JobData),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const body = request.body;
        const requester = body.requester_vat_number ?? null;
        const asynchronous = body.async === true;
        const include = parseInclude(body.include);
        if (!include.ok) throw errors.invalidRequest(include.message, { field: 'include' });
        if (include.peppol && !peppolAllowed(principal)) throw errors.scopeNotAllowed(PEPPOL_SCOPE_MESSAGE);
        const checked = batch.checkRequest({
          principal,
          count: body.vat_numbers.length,
          asynchronous,
          requester,
        });
        if (checked.kind === 'refused') throw refusalError(checked);
        if (asynchronous) {
          const created = await batch.createJob({
            principal,
            requestId: request.id,
            requestBody: body,
            items: batchItems(body.vat_numbers),
            requester,
            includePeppol: include.peppol,
          });
          if (created.kind === 'refused') throw refusalError(created);
          return reply.code(202).send({ data: created.job, meta: baseMeta(request, reply) });
        }
        const validated = await batch.validateMany(
          batchItems(body.vat_numbers),
          requester,
          principal,
          include,
        );
        return sendRecorded({
          request,
          reply,
          principal,
          endpoint: 'validate_batch',
          data: { summary: validated.summary, results: validated.results },
          meta: { ...rollup(validated.sources), sources: validated.sources },
          requestBody: body,
          valid: null,
          event: 'batch.completed',
          answers: validated.answers,
        });
      },
    );

    app.get(
      '/v1/validate/batch/:id',
      {
        onRequest: requireKey('batch'),
        schema: {
          tags: ['Validation'],
          summary: 'A batch job',
          description: aBatchJobDescription,
          security: [{ apiKey: [] }],
          params: Params,
          response: { 200: Envelope(JobData), ...errorResponses },
        },
      },
      async (request, reply) => {
        const job = await batch.getJob(principalOf(request), request.params.id);
        if (job.kind === 'refused') throw refusalError(job);
        if (job.kind === 'progress') return reply.send({ data: job.view, meta: baseMeta(request, reply) });
        // A completed job's data is already JSON (see `getJob`); only the meta is this request's.
        return reply
          .type('application/json; charset=utf-8')
          .send(`{"data":${job.json},"meta":${JSON.stringify(baseMeta(request, reply))}}`);
      },
    );
  };
}
