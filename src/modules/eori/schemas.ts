import { Type } from '@sinclair/typebox';
import { Literals, Nullable } from '../../http/schemas.js';
import { EORI_BATCH_LIMIT } from './service.js';
import { eoriTestModeTable } from './test-answers.js';

export const EORI_SOURCES = ['eos', 'hmrc'] as const;
export const EORI_SOURCE_STATUSES = ['live', 'cached', 'degraded'] as const;

export const EoriDataSchema = Type.Object(
  {
    valid: Type.Boolean({
      description:
        'Whether the service holds the number as a registered EORI number (EOS `status` 0, HMRC `valid: true`).',
    }),
    eori: Type.String({ description: 'Canonical: country code and identifier, upper case, no separators.' }),
    country_code: Type.String({
      description: 'The code the number carries: an EU member state (`GR` for Greece), `XI` or `GB`.',
    }),
    company: Nullable(
      Type.Object(
        {
          name: Nullable(Type.String()),
          address: Nullable(
            Type.Object({
              street: Nullable(Type.String()),
              postal_code: Nullable(Type.String()),
              city: Nullable(Type.String()),
              country: Nullable(Type.String({ description: 'As the service gives it.' })),
            }),
          ),
        },
        {
          description:
            'As the service publishes it; null when the number is not valid or the trader did not agree to publication.',
        },
      ),
    ),
    verified_at: Type.String({ format: 'date-time', description: 'When the service checked the number.' }),
  },
  { $id: 'EoriData', title: 'EoriData' },
);

export const EoriMetaFields = {
  cached: Type.Boolean({ description: 'True when the answer was stored earlier.' }),
  source: Literals(EORI_SOURCES, {
    description:
      "The service that answers for the number: `eos` (the Commission's, EU and XI numbers) or `hmrc` (GB numbers); for test keys, the one a live key would ask.",
  }),
  source_status: Literals(EORI_SOURCE_STATUSES, {
    description:
      '`live`: the service answered now; `cached`: a stored answer within its TTL; `degraded`: the service is down or throttling and an older stored answer was served.',
  }),
  cached_at: Nullable(
    Type.String({
      format: 'date-time',
      description: 'When the stored answer was obtained; null for a live answer.',
    }),
  ),
  stale_seconds: Nullable(
    Type.Integer({ minimum: 0, description: 'Age of the stored answer in seconds; null for a live answer.' }),
  ),
};

export const CacheQuery = Type.Object(
  {
    cache: Type.Optional(
      Type.Unsafe<'true' | 'false'>({
        type: 'string',
        enum: ['true', 'false'],
        description: '`false` forces a call to the service.',
      }),
    ),
  },
  { description: 'Unknown query parameters are ignored.' },
);

export const BatchBody = Type.Object(
  {
    eori_numbers: Type.Array(Type.String(), {
      minItems: 1,
      description: `The EORI numbers, written any common way; at most ${EORI_BATCH_LIMIT} (more is \`400 batch_too_large\`).`,
    }),
  },
  { description: 'Unknown fields are ignored.' },
);

const ItemError = Type.Object({
  code: Type.Union([Type.Literal('invalid_format'), Type.Literal('registry_unavailable')], {
    description:
      'Why this number has no answer: `invalid_format` (it cannot be an EORI number; `reason` says why) or `registry_unavailable` (retry later).',
  }),
  message: Type.String(),
  reason: Type.Optional(Literals(['country', 'characters', 'length'] as const)),
});

const ItemResult = Type.Union([
  Type.Object({
    ok: Type.Literal(true),
    data: Type.Ref('EoriData'),
    meta: Type.Object({ source: EoriMetaFields.source, source_status: EoriMetaFields.source_status }),
  }),
  Type.Object({ ok: Type.Literal(false), error: ItemError }),
]);

export const BatchData = Type.Object({
  summary: Type.Object({
    total: Type.Integer(),
    valid: Type.Integer(),
    invalid: Type.Integer(),
    failed: Type.Integer({
      description: 'Numbers without an answer: malformed, or the service unavailable.',
    }),
  }),
  results: Type.Array(ItemResult, { description: 'One per input number, in input order.' }),
});

export const BatchMetaFields = {
  cached: Type.Boolean({ description: 'True when every answer was a stored one (none live).' }),
  source_status: Literals(EORI_SOURCE_STATUSES, {
    description: 'The worst status among the answers: `degraded` over `cached` over `live`.',
  }),
  sources: Type.Record(
    Type.String(),
    Type.Object({ live: Type.Integer(), cached: Type.Integer(), degraded: Type.Integer() }),
    { description: 'Answers per service (`eos`, `hmrc`) and `source_status`.' },
  ),
};

const common = `Normalises the number (any case, spaces, dots, dashes; \`EL\` is read as Greece's \`GR\`, \`UK\` as \`GB\`) and checks its format locally: a country code, then up to 15 letters and digits; GB and XI numbers 12 to 15 digits. EU and XI numbers are checked by the Commission's EOS service, GB numbers by HMRC. An outage, an error page, a fault, a timeout or throttling is never reported as \`valid: false\`: a stored answer is served with \`source_status: "degraded"\`, or the answer is \`502 registry_unavailable\` with \`Retry-After\`. Answers are cached (valid 30 days, not valid 1 day); \`cache=false\` asks the service.`;

export const checkOneEoriDescription = `${common} A number that cannot be an EORI number is \`400 invalid_format\` with \`error.details.reason\` = \`country\`, \`characters\` or \`length\`.\n\nTest keys (\`svc_test_…\`) never call a service:\n\n${eoriTestModeTable()}`;

export const checkEoriBatchDescription = `Checks up to ${EORI_BATCH_LIMIT} EORI numbers; each distinct number is asked once, in requests of at most 10 per service. ${common} A malformed number fails alone (its item is \`ok: false\` with \`invalid_format\`) and is never sent, so it never costs the others their answer. Test keys answer from the table of \`GET /v1/eori/{number}\`.`;
