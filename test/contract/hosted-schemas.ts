/**
 * The shapes of the hosted VAT API's published contract (its OpenAPI 3.1 description and its Node
 * SDK's types), stated here in the project's own words so that a client written for the hosted
 * service can be checked against openvat without the hosted files. Brand words are openvat's
 * (`taxauth` for the German authority). Objects accept additional fields unless the hosted contract
 * closes them: openvat's additions must not break a hosted client, its omissions must.
 */
import { type TSchema, Type } from '@sinclair/typebox';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Int = Type.Integer({ minimum: 0 });
const Registry = Type.Union([
  Type.Literal('vies'),
  Type.Literal('hmrc'),
  Type.Literal('bfs'),
  Type.Literal('brreg'),
]);
const SourceStatus = Type.Union([Type.Literal('live'), Type.Literal('cached'), Type.Literal('degraded')]);
const Country = Type.String({ pattern: '^[A-Za-z]{2}$' });

/** The closed list of error codes of the hosted description's error envelope. */
export const HOSTED_ERROR_CODES = [
  'unauthorized',
  'plan_required',
  'invalid_format',
  'country_unsupported',
  'country_unknown',
  'batch_too_large',
  'webhook_limit_reached',
  'seller_country_unsupported',
  'b2c_not_supported',
  'buyer_vat_not_registered',
  'not_found',
  'rate_limited',
  'registry_unavailable',
] as const;

/** The codes the hosted SDK knows besides those (confirmations). */
export const HOSTED_CONFIRM_ERROR_CODES = [
  'invalid_requester_vat',
  'taxauth_session_limit',
  'taxauth_unavailable',
  'taxauth_server_error',
  'taxauth_rejected',
] as const;

const literals = (codes: readonly string[]) => Type.Union(codes.map((c) => Type.Literal(c)));

/** Error envelope: exactly `error` and `meta`; `meta.latency_ms` an integer. */
export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({ code: literals(HOSTED_ERROR_CODES), message: Type.String() }),
    meta: Type.Object({ request_id: Type.String(), latency_ms: Int }),
  },
  { additionalProperties: false },
);

/** The SDK's view of a confirmation error: the envelope with the SDK's full code list. */
export const ConfirmErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: literals([...HOSTED_ERROR_CODES, ...HOSTED_CONFIRM_ERROR_CODES]),
      message: Type.String(),
    }),
    meta: Type.Object({ request_id: Type.String() }),
  },
  { additionalProperties: false },
);

export const Health = Type.Object({ ok: Type.Literal(true) }, { additionalProperties: false });

const CountryVat = Nullable(
  Type.Object({
    name: Type.String(),
    abbreviation: Type.String(),
    currency: Type.String(),
    standard_rate: Type.Number(),
    reduced_rates: Type.Array(Type.Number()),
    super_reduced_rate: Nullable(Type.Number()),
    parking_rate: Nullable(Type.Number()),
    number_format: Type.String(),
    number_pattern: Type.String(),
    updated_at: Type.String(),
  }),
);

const ValidateData = Type.Object({
  valid: Type.Boolean(),
  vat_number: Type.String(),
  country: Type.Object({ code: Country, name: Type.String(), vat: CountryVat }),
  company: Nullable(Type.Object({ name: Type.String(), address: Type.Optional(Type.String()) })),
  verify_id: Nullable(Type.String()),
  verified_at: Type.String({ format: 'date-time' }),
});

const Meta = Type.Object({
  request_id: Type.String(),
  latency_ms: Int,
  cached: Type.Boolean(),
  source: Registry,
  source_status: SourceStatus,
});

export const ValidateResponse = Type.Object({ data: ValidateData, meta: Meta });

export const BatchResponse = Type.Object({
  data: Type.Object({
    summary: Type.Object({ total: Int, successful: Int, failed: Int }),
    results: Type.Array(
      Type.Union([
        Type.Object({ ok: Type.Literal(true), data: ValidateData }),
        Type.Object({
          ok: Type.Literal(false),
          error: Type.Object({
            code: literals(['invalid_format', 'country_unsupported', 'registry_unavailable']),
            message: Type.String(),
          }),
        }),
      ]),
    ),
  }),
  meta: Meta,
});

export const DecideResponse = Type.Object({
  data: Type.Object({
    charge_vat: Type.Boolean(),
    rate: Type.Number({ minimum: 0, maximum: 100 }),
    mechanism: literals(['standard', 'reverse_charge', 'zero_rated', 'out_of_scope']),
    legal_basis: Type.String(),
    explanation: Type.String(),
    invoice_note: Type.String(),
    disclaimer: Type.String(),
    buyer_vat: Type.Optional(
      Type.Object({
        valid: Type.Boolean(),
        country: Type.Optional(Type.Object({ code: Country, name: Type.String() })),
      }),
    ),
    decided_at: Type.String({ format: 'date-time' }),
  }),
  meta: Type.Object({
    request_id: Type.String(),
    latency_ms: Int,
    source_status: SourceStatus,
    sources: Type.Array(
      Type.Object({
        role: literals(['seller', 'buyer']),
        source: Registry,
        source_status: SourceStatus,
        cached: Type.Boolean(),
        cached_at: Nullable(Type.String({ format: 'date-time' })),
        stale_seconds: Nullable(Int),
      }),
    ),
  }),
});

const CountryRate = Type.Object({
  country_code: Type.String({ minLength: 2, maxLength: 2 }),
  country_name: Type.String(),
  country_name_local: Type.String(),
  currency: Type.String({ minLength: 3, maxLength: 3 }),
  is_eu_member: Type.Boolean(),
  supports_live_validation: Type.Boolean(),
  standard_rate: Type.Number(),
  reduced_rates: Type.Array(Type.Number()),
  super_reduced_rate: Nullable(Type.Number()),
  parking_rate: Nullable(Type.Number()),
  vat_name: Type.String(),
  vat_abbr: Type.String(),
  vat_number_format: Type.String(),
  vat_number_regex: Type.String(),
  registration_threshold: Nullable(
    Type.Object({
      domestic: Nullable(Type.Number()),
      distance_selling: Nullable(Type.Number()),
      currency: Type.String({ minLength: 3, maxLength: 3 }),
    }),
  ),
  updated_at: Type.String(),
});

const RatesMeta = { request_id: Type.String(), data_version: Type.String(), cached: Type.Boolean() };

export const RatesListResponse = Type.Object({
  data: Type.Array(CountryRate),
  meta: Type.Object({ ...RatesMeta, count: Int }),
});

export const RatesSingleResponse = Type.Object({ data: CountryRate, meta: Type.Object(RatesMeta) });

export const AuditResponse = Type.Object({
  data: Type.Object({
    request_id: Type.String({ format: 'uuid' }),
    endpoint: literals(['validate', 'decide', 'validate_batch']),
    response: Type.Object({}),
    created_at: Type.String(),
    expires_at: Type.String(),
  }),
  meta: Type.Object({ request_id: Type.String({ format: 'uuid' }), latency_ms: Type.Number() }),
});

const WebhookPublic = {
  id: Type.String({ format: 'uuid' }),
  url: Type.String({ format: 'uri' }),
  created_at: Type.String(),
};

export const WebhookCreated = Type.Object({ ...WebhookPublic, secret: Type.String() });
export const WebhookList = Type.Object({ data: Type.Array(Type.Object(WebhookPublic)) });
export const WebhookTest = Type.Object({ delivered: Type.Boolean(), status: Type.Integer() });

const Match = literals(['A', 'B', 'C', 'D']);
const Fields = <T extends TSchema>(schema: T) =>
  Type.Object({ name: schema, street: schema, postcode: schema, town: schema });

/** The SDK's `ConfirmResponse`. */
export const ConfirmResponse = Type.Object({
  data: Type.Object({
    valid: Type.Boolean(),
    qualified: Type.Boolean(),
    vat_number: Type.String(),
    requester_vat_number: Type.String(),
    matches: Fields(Match),
    company: Fields(Nullable(Type.String())),
    valid_from: Nullable(Type.String()),
    valid_to: Nullable(Type.String()),
    confirmation_id: Type.String({ format: 'uuid' }),
    confirmed_at: Type.String(),
  }),
  meta: Type.Object({
    source: Type.Literal('taxauth'),
    source_status: Type.Literal('live'),
    latency_ms: Int,
    request_id: Type.String(),
    taxauth_status_code: Type.String(),
    taxauth_id: Nullable(Type.String()),
  }),
});

/** The SDK's `ConfirmationDetailResponse`. */
export const ConfirmationDetail = Type.Object({
  data: Type.Object({
    id: Type.String(),
    request_id: Type.String(),
    requester_vat: Type.String(),
    queried_vat: Type.String(),
    taxauth_status_code: Type.String(),
    taxauth_id: Nullable(Type.String()),
    valid: Type.Boolean(),
    qualified: Type.Boolean(),
    matches: Fields(Nullable(Match)),
    result: Fields(Nullable(Type.String())),
    valid_from: Nullable(Type.String()),
    valid_to: Nullable(Type.String()),
    created_at: Type.String(),
  }),
  meta: Type.Object({ request_id: Type.String() }),
});
