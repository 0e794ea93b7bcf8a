import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../http/api-error.js';
import { latencyMs } from '../../http/meta.js';
import { refusalError } from '../../http/refusals.js';
import { errorResponses, MetaBase, Nullable } from '../../http/schemas.js';
import { isUuid } from '../../lib/ids.js';
import { principalOf, type RequireKey } from '../keys/index.js';
import type { SendRecorded } from '../outbox/index.js';
import { toTaxauthCode } from './authority.js';
import { EvidenceUnverifiedError } from './guard.js';
import { storedConfirmationDescription } from './schemas.js';
import {
  type ConfirmationData,
  type ConfirmationsService,
  confirmationNotFound,
  evidenceRefusal,
} from './service.js';

const MatchCode = Type.Union([Type.Literal('A'), Type.Literal('B'), Type.Literal('C'), Type.Literal('D')], {
  description:
    'A = matches, B = does not match, C = not requested (not supplied), D = not provided by the registry.',
});

const ConfirmBody = Type.Object(
  {
    vat_number: Type.String({
      minLength: 3,
      maxLength: 64,
      description:
        'Foreign EU VAT number with its country prefix, e.g. `ATU12345678` (`GR` is read as `EL`).',
    }),
    company: Type.Object(
      {
        name: Type.String({
          minLength: 1,
          maxLength: 500,
          description: 'Company name, with its legal form.',
        }),
        street: Type.Optional(Type.String({ maxLength: 500, description: 'Optional but recommended.' })),
        postcode: Type.Optional(Type.String({ maxLength: 50, description: 'Optional but recommended.' })),
        town: Type.Optional(
          Type.String({
            maxLength: 200,
            description: 'Optional but recommended: without it the authority makes only a simple check.',
          }),
        ),
      },
      { additionalProperties: false, description: 'Company details; only supplied fields are matched.' },
    ),
    requester_vat_number: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          "German VAT number authorising the confirmation; overrides the key's `default_requester_vat`. Must pass the German check digit.",
      }),
    ),
  },
  { additionalProperties: false },
);

const ConfirmationResult = Type.Object({
  valid: Type.Boolean(),
  qualified: Type.Boolean({ description: 'True only when every supplied field returned match code A.' }),
  vat_number: Type.String({ description: 'The confirmed number, normalised with its prefix.' }),
  requester_vat_number: Type.String(),
  matches: Type.Object({ name: MatchCode, street: MatchCode, postcode: MatchCode, town: MatchCode }),
  company: Type.Object(
    {
      name: Nullable(Type.String()),
      street: Nullable(Type.String()),
      postcode: Nullable(Type.String()),
      town: Nullable(Type.String()),
    },
    { description: 'Company data as held by the foreign registry, where the authority returns it.' },
  ),
  valid_from: Nullable(Type.String({ format: 'date' })),
  valid_to: Nullable(Type.String({ format: 'date' })),
  confirmation_id: Type.String({
    format: 'uuid',
    description: 'Retrievable with GET /v1/confirmations/{id} for 10 years.',
  }),
  confirmed_at: Type.String({ format: 'date-time', description: "The authority's time of the answer." }),
});

const ConfirmationMeta = Type.Object({
  request_id: MetaBase.request_id,
  latency_ms: Type.Integer({ description: 'Processing time in whole milliseconds.' }),
  source: Type.Literal('taxauth'),
  source_status: Type.Literal('live'),
  taxauth_status_code: Type.String({ description: "The authority's status, e.g. `taxauth-0000`." }),
  taxauth_id: Nullable(Type.String({ description: "The authority's own request id." })),
});

const NullableMatch = Nullable(MatchCode);

/**
 * A stored confirmation: first the record of the hosted contract (`id` … `created_at`), then
 * openvat's evidence (the exchange byte for byte and the record's place in the hash chain).
 */
const StoredConfirmation = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The `confirmation_id`.' }),
  request_id: Type.String({ description: 'The `meta.request_id` of the original response.' }),
  requester_vat: Type.String({ description: 'The German requester VAT number used.' }),
  queried_vat: Type.String({ description: 'The confirmed number, normalised with its prefix.' }),
  taxauth_status_code: Type.String({ description: "The authority's status, e.g. `taxauth-0000`." }),
  taxauth_id: Nullable(Type.String({ description: "The authority's own request id." })),
  valid: Type.Boolean(),
  qualified: Type.Boolean(),
  matches: Type.Object({
    name: NullableMatch,
    street: NullableMatch,
    postcode: NullableMatch,
    town: NullableMatch,
  }),
  result: Type.Object(
    {
      name: Nullable(Type.String()),
      street: Nullable(Type.String()),
      postcode: Nullable(Type.String()),
      town: Nullable(Type.String()),
    },
    { description: 'Company data as held by the foreign registry (`data.company` of the response).' },
  ),
  valid_from: Nullable(Type.String({ format: 'date' })),
  valid_to: Nullable(Type.String({ format: 'date' })),
  created_at: Type.String({ format: 'date-time' }),
  confirmation_id: Type.String({ format: 'uuid', description: 'Same as `id`.' }),
  key_id: Type.String({ description: 'The API key that made the request (same account).' }),
  mode: Type.Union([Type.Literal('live'), Type.Literal('test')]),
  retain_until: Type.String({ format: 'date-time', description: 'Kept at least until then (10 years).' }),
  request: Type.Object({}, { additionalProperties: true, description: 'The API request body.' }),
  response: Type.Object(
    {},
    { additionalProperties: true, description: 'The original response envelope, byte for byte as stored.' },
  ),
  taxauth: Type.Object({
    status_code: Type.String(),
    id: Nullable(Type.String()),
    url: Type.String({ description: 'Where the request went.' }),
    http_status: Type.Integer(),
    request: Type.String({ description: 'The exact request body sent to the authority.' }),
    response: Type.String({ description: "The authority's response body, verbatim." }),
  }),
  evidence: Type.Object({
    algorithm: Type.Literal('sha256'),
    seq: Type.Integer({ description: 'Position in the evidence chain of all confirmations.' }),
    prev_hash: Type.String({ description: 'Hash of the confirmation before it (64 zeros for the first).' }),
    hash: Type.String({ description: 'SHA-256 over the canonical record, `prev_hash` included.' }),
  }),
});

/** The record fields of the hosted contract, read from the stored response (its `data`). */
function recordFields(responseJson: string) {
  const data = (JSON.parse(responseJson) as { data: ConfirmationData }).data;
  return {
    matches: data.matches,
    result: data.company,
    valid_from: data.valid_from,
    valid_to: data.valid_to,
  };
}

const CONFIRM_DESCRIPTION = `Business plan. Asks the German federal tax authority (eVatR, §18e UStG) to confirm a foreign EU VAT number and compare the supplied company details field by field. Every 200 is stored for 10 years as evidence (retrievable with GET /v1/confirmations/{id}) together with the authority's raw exchange, in a hash chain.

Statuses: 200 qualified, valid-not-qualified or invalid; 400 \`invalid_format\` (bad body, a DE target), 400 \`invalid_requester_vat\` (no requester, or its check digit fails: \`details.reason = checksum\`), 400 \`taxauth_rejected\` (a caller-fixable authority code); 409/422 \`idempotency_conflict\` (key in flight / key reused with another body); 422 \`invalid_requester_vat\` (the authority does not accept the requester, \`taxauth-0004\`); 429 \`rate_limited\` (local burst limit) or \`taxauth_session_limit\` (the authority's session limit, \`taxauth-0008\`), with Retry-After; 502 \`taxauth_unavailable\` (network failure or timeout); 503 \`taxauth_unavailable\` (\`taxauth-0011\`, \`taxauth-0013\`) or \`taxauth_server_error\` (the authority's server errors and unknown codes), with Retry-After. \`error.details.taxauth_status_code\` carries the authority's code where there is one.

\`Idempotency-Key\` (UUID, optional): per account for 24 hours; the same key and body replay the stored response (header \`Idempotent-Replayed: true\`). Only 200s are stored; an error frees the key.

Test keys never call the authority. Magic target numbers (any prefix; examples with AT): \`ATU12345678\` (or any other) qualified, A for every supplied field; \`ATU88881111\` street and postcode B; \`ATU88882222\` street and postcode D; \`ATU99992001\` invalid; \`ATU99992002\` not yet valid (valid_from in the future); \`ATU99992006\` expired (valid_to in the past); \`ATU99992008\` valid, special case; \`ATU99990004\` requester refused (422); \`ATU99990005\` rejected (400); \`ATU99990008\` session limit (429); \`ATU99990011\` unavailable (503); \`ATU88880502\` network failure (502); \`ATU88880504\` timeout (502). In general \`…9999NNNN\` answers status \`taxauth-NNNN\`. Without \`company.town\` the answer is \`taxauth-0003\` (valid, not qualified).`;

export function confirmationsRoutes(deps: {
  confirmations: ConfirmationsService;
  requireKey: RequireKey;
  sendRecorded: SendRecorded;
}) {
  const { confirmations, requireKey, sendRecorded } = deps;
  return async function register(fastify: FastifyInstance) {
    // Handlers get their request parts typed from the route's TypeBox schemas.
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    app.post(
      '/v1/confirm',
      {
        onRequest: requireKey('confirm'),
        schema: {
          tags: ['Qualified confirmations'],
          summary: 'Qualified confirmation of a foreign EU VAT number',
          description: CONFIRM_DESCRIPTION,
          security: [{ apiKey: [] }],
          headers: Type.Object({
            'idempotency-key': Type.Optional(
              Type.String({ maxLength: 100, description: 'A UUID; makes retries safe for 24 hours.' }),
            ),
          }),
          body: ConfirmBody,
          response: {
            200: Type.Object({ data: ConfirmationResult, meta: ConfirmationMeta }),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const body = request.body;
        const idempotencyKey = request.headers['idempotency-key'];
        if (idempotencyKey !== undefined && (typeof idempotencyKey !== 'string' || !isUuid(idempotencyKey))) {
          throw errors.invalidRequest(
            'The Idempotency-Key header must be a UUID, e.g. 0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a5b.',
          );
        }
        const outcome = await confirmations.confirm({
          principal,
          body,
          requestId: request.id,
          idempotencyKey: idempotencyKey?.toLowerCase(),
        });
        switch (outcome.kind) {
          case 'refused':
            throw refusalError(outcome);
          case 'replay':
            // The stored answer again, with no new call to the authority: not counted (keys/quota.ts).
            request.answeredFromCache = true;
            return reply
              .code(outcome.statusCode)
              .header('idempotent-replayed', 'true')
              .type('application/json; charset=utf-8')
              .send(outcome.body);
          case 'confirmed':
            try {
              return await sendRecorded({
                request,
                reply,
                principal,
                endpoint: 'confirm',
                data: outcome.data,
                meta: { ...outcome.meta },
                requestBody: body,
                valid: outcome.data.valid,
                own: outcome.store,
              });
            } catch (error) {
              await outcome.abandon();
              // The chain head changed between the check and the append and does not verify.
              if (error instanceof EvidenceUnverifiedError)
                throw refusalError(evidenceRefusal(error.problem));
              throw error;
            }
        }
      },
    );

    app.get(
      '/v1/confirmations/:id',
      {
        onRequest: requireKey('confirm'),
        schema: {
          tags: ['Qualified confirmations'],
          summary: 'Retrieve a confirmation with its evidence',
          description: storedConfirmationDescription,
          security: [{ apiKey: [] }],
          params: Type.Object({ id: Type.String({ maxLength: 64, description: 'The `confirmation_id`.' }) }),
          response: {
            200: Type.Object({ data: StoredConfirmation, meta: Type.Object(MetaBase) }),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const { id } = request.params;
        if (!isUuid(id)) throw refusalError(confirmationNotFound());
        const found = await confirmations.find(principal, id.toLowerCase());
        if (found.kind === 'refused') throw refusalError(found);
        const row = found.confirmation;
        // Stored JSON documents are spliced in as stored, so they are byte for byte what was kept.
        const fields = recordFields(row.response);
        const head = JSON.stringify({
          id: row.id,
          request_id: row.request_id,
          requester_vat: row.requester_vat_number,
          queried_vat: row.vat_number,
          taxauth_status_code: toTaxauthCode(row.taxauth_status),
          taxauth_id: row.upstream_id,
          valid: Number(row.valid) === 1,
          qualified: Number(row.qualified) === 1,
          ...fields,
          created_at: row.created_at,
          confirmation_id: row.id,
          key_id: row.key_id,
          mode: row.mode,
          retain_until: row.retain_until,
        });
        // Stored JSON documents are spliced in as stored, so they are byte for byte what was kept.
        const body =
          `{"data":${head.slice(0, -1)},"request":${row.api_request},"response":${row.response},` +
          `"taxauth":{"status_code":${JSON.stringify(toTaxauthCode(row.taxauth_status))},` +
          `"id":${JSON.stringify(row.upstream_id)},"url":${JSON.stringify(row.upstream_url)},` +
          `"http_status":${Number(row.upstream_http_status)},"request":${JSON.stringify(row.upstream_request)},` +
          `"response":${JSON.stringify(row.upstream_response)}},` +
          `"evidence":{"algorithm":"sha256","seq":${Number(row.seq)},"prev_hash":${JSON.stringify(row.prev_hash)},` +
          `"hash":${JSON.stringify(row.hash)}}},` +
          `"meta":{"request_id":"${request.id}","latency_ms":${latencyMs(reply)}}}`;
        return reply.type('application/json; charset=utf-8').send(body);
      },
    );
  };
}
