import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errors } from '../../http/api-error.js';
import { clientSignal } from '../../http/client-signal.js';
import { refusalError } from '../../http/refusals.js';
import { Envelope, errorResponses } from '../../http/schemas.js';
import { CLAIM_MAX_LENGTH, claimOf } from '../identity-match/index.js';
import { principalOf, type RequireKey } from '../keys/index.js';
import type { SendRecorded } from '../outbox/index.js';
import {
  PEPPOL_SCOPE_MESSAGE,
  type PeppolPort,
  parseInclude,
  peppolAllowed,
  peppolPart,
} from '../peppol/index.js';
import { validationRefusal } from './refusals.js';
import { ValidationMetaFields, validateOneVatNumberDescription } from './schemas.js';
import type { ValidationPort } from './types.js';

const Query = Type.Object(
  {
    vat_number: Type.String({
      minLength: 1,
      description:
        'The VAT number with its country prefix, written any common way (`de 136.695.976`, `CHE-116.281.710 MWST`).',
      examples: ['DE100000008'],
    }),
    requester_vat_number: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'Your own VAT number: the registry then returns a consultation number (`verify_id`). Always a live call.',
      }),
    ),
    company_name: Type.Optional(
      Type.String({
        maxLength: CLAIM_MAX_LENGTH.name,
        description:
          "The customer's company name as they give it: compared with the registered name (`data.match.name`) and sent to VIES.",
        examples: ['Testfirma Muster GmbH'],
      }),
    ),
    company_street: Type.Optional(
      Type.String({
        maxLength: CLAIM_MAX_LENGTH.street,
        description: 'Street and house number as the customer gives them (`data.match.street`).',
      }),
    ),
    company_postcode: Type.Optional(
      Type.String({
        maxLength: CLAIM_MAX_LENGTH.postcode,
        description: 'Postcode as the customer gives it (`data.match.postcode`).',
      }),
    ),
    company_city: Type.Optional(
      Type.String({
        maxLength: CLAIM_MAX_LENGTH.city,
        description: 'Town as the customer gives it (`data.match.city`).',
      }),
    ),
    cache: Type.Optional(
      // One string with an `enum` (not a union of literals), so the reference shows `"true" | "false"`.
      Type.Unsafe<'true' | 'false'>({
        type: 'string',
        enum: ['true', 'false'],
        description: '`false` forces a live registry call.',
      }),
    ),
    include: Type.Optional(
      Type.String({
        description:
          'Parts to add to the answer, comma-separated: `peppol` adds `data.peppol` (can the company receive e-invoices over Peppol; see `GET /v1/peppol/{identifier}`). A Peppol outage never fails the validation: the part is then `{ "error": … }`. An unknown value is `400 invalid_format`.',
        examples: ['peppol'],
      }),
    ),
  },
  // Unknown parameters are ignored, not refused, as by the hosted contract.
  { description: 'Unknown query parameters are ignored.' },
);

export function validationRoutes(deps: {
  validation: ValidationPort;
  peppol: PeppolPort;
  requireKey: RequireKey;
  sendRecorded: SendRecorded;
}) {
  const { validation, peppol, requireKey, sendRecorded } = deps;
  return async function register(fastify: FastifyInstance) {
    // Handlers get their request parts typed from the route's TypeBox schemas.
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/v1/validate',
      {
        onRequest: requireKey('validate'),
        schema: {
          tags: ['Validation'],
          summary: 'Validate one VAT number',
          description: validateOneVatNumberDescription,
          security: [{ apiKey: [] }],
          querystring: Query,
          response: { 200: Envelope(Type.Ref('ValidationData'), ValidationMetaFields), ...errorResponses },
        },
      },
      async function validateOne(request, reply) {
        const principal = principalOf(request);
        const query = request.query;
        const claim = claimOf(query);
        const include = parseInclude(query.include);
        if (!include.ok) throw errors.invalidRequest(include.message, { field: 'include' });
        if (include.peppol && !peppolAllowed(principal)) throw errors.scopeNotAllowed(PEPPOL_SCOPE_MESSAGE);
        // The Peppol part is looked up alongside the VAT answer, and never fails it.
        const peppolAsked = include.peppol
          ? peppolPart(peppol, query.vat_number, principal, {
              useCache: query.cache !== 'false',
              signal: clientSignal(request, reply),
            })
          : null;
        const outcome = await validation.validate(
          {
            vatNumber: query.vat_number,
            requesterVatNumber: query.requester_vat_number ?? null,
            useCache: query.cache !== 'false',
            // Answered before the server's idle timeout; the registry work stops if the client goes.
            clientWaiting: true,
            ...(claim ? { claim } : {}),
          },
          principal,
          () => clientSignal(request, reply),
        );
        if (outcome.kind !== 'ok') throw refusalError(validationRefusal(outcome));
        const data = peppolAsked ? { ...outcome.data, peppol: await peppolAsked } : outcome.data;
        return sendRecorded({
          request,
          reply,
          principal,
          endpoint: 'validate',
          data,
          meta: { ...outcome.meta },
          requestBody: query,
          valid: outcome.data.valid,
          event: 'validation.completed',
          ...(outcome.fresh ? { answers: [outcome.fresh] } : {}),
        });
      },
    );
  };
}
