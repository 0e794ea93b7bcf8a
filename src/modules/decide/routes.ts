import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { refusalError } from '../../http/refusals.js';
import { Envelope, errorResponses, Literals, Nullable } from '../../http/schemas.js';
import { principalOf, type RequireKey } from '../keys/index.js';
import type { SendRecorded } from '../outbox/index.js';
import { SOURCE_STATUSES, ValidationMetaFields } from '../validation/index.js';
import { theVatTreatmentOfASaleDescription } from './schemas.js';
import type { DecideService } from './service.js';

const SupplyTypeSchema = Literals(['goods', 'services', 'digital_services'], {
  description:
    '`digital_services` are telecommunications, broadcasting and electronically supplied services (Art. 58). Default `services`.',
});

const Amount = (description: string) => Type.Number({ minimum: 0, maximum: 1e15, description });

export const DecideBody = Type.Object(
  {
    seller_vat: Type.String({
      minLength: 1,
      maxLength: 256,
      description: "The seller's VAT number; the seller must be in an EU member state (XI for goods only).",
    }),
    buyer_vat: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description:
          "The buyer's VAT number (a sale to a business). Exactly one of `buyer_vat` and `buyer_country`.",
      }),
    ),
    buyer_country: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z]{2}$',
        description:
          "The consumer's country (a sale to a consumer): ISO 3166-1 alpha-2, case-insensitive; `GR` and `EL` are both Greece, `XI` is Northern Ireland.",
      }),
    ),
    supply_type: Type.Optional(SupplyTypeSchema),
    supply_date: Type.Optional(
      Type.String({
        pattern: '^\\d{4}-\\d{2}-\\d{2}$',
        description:
          'Day of the supply, `YYYY-MM-DD`: the rates in force that day apply. Default: today in the time zone of the country of taxation.',
      }),
    ),
    seller_eu_b2c_sales_ytd: Type.Optional(
      Amount(
        "The seller's sales to consumers in other member states this calendar year (goods dispatched there and digital services), in euros excluding VAT, this sale included. With `seller_eu_b2c_sales_last_year`, applies the EUR 10,000 threshold of Art. 59c.",
      ),
    ),
    seller_eu_b2c_sales_last_year: Type.Optional(
      Amount('The same total for the previous calendar year, in euros excluding VAT.'),
    ),
  },
  { additionalProperties: false },
);

const VatCheckSchema = Type.Object({
  vat_number: Type.String({ description: 'Normalised, with its prefix.' }),
  valid: Type.Boolean({ description: "The registry's answer." }),
  country: Type.Object({
    code: Type.String({ description: 'ISO 3166-1 alpha-2 (GR for EL numbers, XI for Northern Ireland).' }),
    name: Type.String({ description: 'English name.' }),
  }),
});

export const DecideData = Type.Object(
  {
    charge_vat: Type.Boolean({ description: 'Whether the seller charges VAT on the invoice.' }),
    rate: Type.Number({
      description: 'The rate the seller charges, in percent (19 means 19%); 0 when no VAT is charged.',
    }),
    standard_rate: Nullable(
      Type.Number({
        description:
          'The standard rate of `country_of_taxation` in force on `supply_date` (for a reverse charge: the rate the buyer accounts for); null when the country is not in the rates data.',
      }),
    ),
    mechanism: Literals(['standard', 'reverse_charge', 'zero_rated', 'out_of_scope'], {
      description:
        '`standard`: the seller charges VAT; `reverse_charge`: the buyer accounts for it; `zero_rated`: exempt with the right to deduct (intra-Community supply, export); `out_of_scope`: not subject to EU VAT.',
    }),
    country_of_taxation: Type.String({
      description: 'ISO 3166-1 alpha-2 of the country whose VAT governs the supply (GR, XI).',
    }),
    legal_basis: Type.String({ description: 'The articles of Council Directive 2006/112/EC applied.' }),
    articles: Type.Array(Type.String(), { description: 'The article numbers, e.g. `["44", "196"]`.' }),
    explanation: Type.String(),
    invoice_note: Type.String({
      description: 'The mention the invoice must carry, in English; `""` when none is required.',
    }),
    invoice_note_translations: Type.Array(
      Type.Object({
        language: Type.String({ description: 'ISO 639-1.' }),
        text: Type.String(),
      }),
      {
        description:
          "The same mention in the official language(s) of the buyer's country (English excluded); empty when none is required.",
      },
    ),
    disclaimer: Type.String(),
    customer_type: Literals(['business', 'consumer'], {
      description:
        '`consumer` for `buyer_country`, and for a buyer VAT number the registry says is not valid.',
    }),
    supply_type: SupplyTypeSchema,
    supply_date: Type.String({ format: 'date' }),
    oss_threshold: Nullable(
      Type.Object(
        {
          threshold: Type.Number(),
          currency: Type.Literal('EUR'),
          sales_ytd: Nullable(Type.Number()),
          sales_last_year: Nullable(Type.Number()),
          exceeded: Nullable(
            Type.Boolean({
              description: 'Null when the sales were not given: the destination rule then applies.',
            }),
          ),
        },
        {
          description:
            'The EUR 10,000 threshold of Art. 59c, for cross-border B2C distance sales of goods and digital services inside the EU; null otherwise.',
        },
      ),
    ),
    seller_vat: VatCheckSchema,
    buyer_vat: Nullable(VatCheckSchema),
    buyer_country: Type.String({
      description: 'ISO 3166-1 alpha-2 of the buyer (from the prefix or `buyer_country`).',
    }),
    decided_at: Type.String({ format: 'date-time' }),
  },
  { title: 'DecideData' },
);

const DecideMeta = {
  source_status: Literals(SOURCE_STATUSES, {
    description: 'The worst `source_status` of the look-ups: `degraded` over `cached` over `live`.',
  }),
  sources: Type.Array(
    Type.Object({
      role: Literals(['seller', 'buyer']),
      vat_number: Type.String(),
      source: ValidationMetaFields.source,
      source_status: ValidationMetaFields.source_status,
      cached: Type.Boolean(),
      cached_at: ValidationMetaFields.cached_at,
      stale_seconds: ValidationMetaFields.stale_seconds,
    }),
    { description: 'One entry per registry look-up.' },
  ),
};

export function decideRoutes(deps: {
  decide: DecideService;
  requireKey: RequireKey;
  sendRecorded: SendRecorded;
}) {
  const { decide, requireKey, sendRecorded } = deps;
  return async function register(fastify: FastifyInstance) {
    // Handlers get their request parts typed from the route's TypeBox schemas.
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    app.post(
      '/v1/decide',
      {
        onRequest: requireKey('decide'),
        schema: {
          tags: ['Decide'],
          summary: 'The VAT treatment of a sale',
          description: theVatTreatmentOfASaleDescription,
          security: [{ apiKey: [] }],
          body: DecideBody,
          response: { 200: Envelope(DecideData, DecideMeta), ...errorResponses },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const body = request.body;
        const result = await decide.decide(body, principal);
        if (result.kind === 'refused') throw refusalError(result);
        return sendRecorded({
          request,
          reply,
          principal,
          endpoint: 'decide',
          data: result.data,
          meta: result.meta,
          requestBody: body,
          valid: result.valid,
          answers: result.answers,
        });
      },
    );
  };
}
