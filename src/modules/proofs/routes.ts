import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { baseMeta } from '../../http/meta.js';
import { refusalError } from '../../http/refusals.js';
import { Envelope, errorResponses } from '../../http/schemas.js';
import { principalOf, type RequireKey } from '../keys/index.js';
import { renderProofPdf } from './pdf.js';
import { proofDescription } from './schemas.js';
import type { ProofsService } from './service.js';
import type { ProofOutcome } from './types.js';

const Query = Type.Object({
  lang: Type.Optional(
    Type.Union([Type.Literal('de'), Type.Literal('en')], { description: 'The language of the proof.' }),
  ),
});

const proofResponses = {
  200: {
    description: 'The proof.',
    content: {
      'application/pdf': { schema: Type.String({ format: 'binary', description: 'The proof as a PDF.' }) },
      'application/json': { schema: Envelope(Type.Ref('Proof')) },
    },
  },
  ...errorResponses,
};

/** JSON when the client asks for it and not for a PDF; a PDF otherwise. */
function wantsJson(accept: string | undefined): boolean {
  const value = (accept ?? '').toLowerCase();
  return value.includes('application/json') && !value.includes('application/pdf');
}

async function send(request: FastifyRequest, reply: FastifyReply, outcome: ProofOutcome, name: string) {
  if (outcome.kind === 'refused') throw refusalError(outcome);
  const { proof } = outcome;
  reply.header('vary', 'Accept, Accept-Language');
  if (wantsJson(request.headers.accept)) {
    return reply
      .type('application/json; charset=utf-8')
      .send({ data: proof, meta: baseMeta(request, reply) });
  }
  const pdf = await renderProofPdf(proof);
  return reply
    .type('application/pdf')
    .header('content-disposition', `inline; filename="${name}-${proof.id}-${proof.language}.pdf"`)
    .send(pdf);
}

export function proofsRoutes(deps: { proofs: ProofsService; requireKey: RequireKey }) {
  const { proofs, requireKey } = deps;
  return async function register(fastify: FastifyInstance) {
    // Handlers get their request parts typed from the route's TypeBox schemas.
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

    app.get(
      '/v1/confirmations/:id/proof',
      {
        onRequest: requireKey('confirm'),
        schema: {
          tags: ['Qualified confirmations'],
          summary: 'Proof of a confirmation for an auditor (PDF or JSON)',
          description: proofDescription(
            "Business plan. What was asked, what the authority answered (status, match grid, its request id and time), when, the record's hash, its place in the evidence chain, the newest signed chain head and the newest trusted time-stamp token covering it, and how to verify. Other accounts and unknown ids get 404, as for the confirmation itself.",
          ),
          security: [{ apiKey: [] }],
          params: Type.Object({ id: Type.String({ format: 'uuid', description: 'The `confirmation_id`.' }) }),
          querystring: Query,
          response: proofResponses,
        },
      },
      async (request, reply) => {
        const outcome = await proofs.confirmationProof(
          principalOf(request),
          request.params.id.toLowerCase(),
          {
            lang: request.query.lang,
            acceptLanguage: request.headers['accept-language'],
          },
        );
        return send(request, reply, outcome, 'confirmation');
      },
    );

    app.get(
      '/v1/audits/:request_id/proof',
      {
        onRequest: requireKey('audits'),
        schema: {
          tags: ['Audit records'],
          summary: 'Proof of a validation with a consultation number (PDF or JSON)',
          description: proofDescription(
            "For the audit record of a validation made with `requester_vat_number` (it carries the registry's consultation number), or answered by a national register because VIES could not answer (`answer.register`: the register's status, identifiers, file date and flags; its consultation number, such as the Polish white list's `requestId`, where it gives one), while the record is kept: what was asked, the registry's answer and consultation number, when, and the SHA-256 of the stored response. Other keys, unknown or expired ids, and other records without a consultation number get 404.",
          ),
          security: [{ apiKey: [] }],
          params: Type.Object({
            request_id: Type.String({
              format: 'uuid',
              description: 'The `meta.request_id` of the validation.',
            }),
          }),
          querystring: Query,
          response: proofResponses,
        },
      },
      async (request, reply) => {
        const outcome = await proofs.auditProof(
          principalOf(request),
          request.params.request_id.toLowerCase(),
          {
            lang: request.query.lang,
            acceptLanguage: request.headers['accept-language'],
          },
        );
        return send(request, reply, outcome, 'validation');
      },
    );
  };
}
