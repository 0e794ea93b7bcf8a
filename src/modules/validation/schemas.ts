import { Type } from '@sinclair/typebox';
import { Literals, Nullable } from '../../http/schemas.js';
import { NATIONAL_SOURCES } from '../../registries/national-port.js';
import { testModeTable } from './test-answers.js';

const FieldMatchSchema = (description: string) =>
  Type.Object(
    {
      result: Literals(['match', 'mismatch', 'unavailable'] as const, {
        description:
          "openvat's reading: `score` against the field's threshold; where the registry returned nothing to compare, the registry's own verdict, else `unavailable`.",
      }),
      score: Nullable(
        Type.Number({
          minimum: 0,
          maximum: 1,
          description:
            "openvat's similarity over the registered data after normalisation; null when the registry returned nothing to compare.",
        }),
      ),
      registry_result: Nullable(
        Literals(['match', 'mismatch', 'not_processed'] as const, {
          description: "The registry's own verdict (VIES `trader*Match`); null when it gave none.",
        }),
      ),
    },
    { description },
  );

export const IdentityMatchSchema = Type.Object(
  {
    overall: FieldMatchSchema(
      '`mismatch` when any field is; `match` when none is and the name matched (or, without a name, a field matched); else `unavailable`. Its score is the weighted mean of the fields compared.',
    ),
    name: Type.Optional(FieldMatchSchema('`company_name` against the registered name.')),
    street: Type.Optional(FieldMatchSchema('`company_street` against the registered street and number.')),
    postcode: Type.Optional(FieldMatchSchema('`company_postcode` against the registered postcode.')),
    city: Type.Optional(FieldMatchSchema('`company_city` against the registered town.')),
  },
  {
    $id: 'IdentityMatch',
    title: 'IdentityMatch',
    description:
      'Whether the company fields given match the registered ones, per field given (a field not given is absent). Never changes `valid`.',
  },
);

export const ValidationDataSchema = Type.Object(
  {
    valid: Type.Boolean({ description: 'Whether the registry has the number as a valid VAT registration.' }),
    vat_number: Type.String({
      description: 'Normalised, with its prefix (EL for Greece, CHE for Switzerland).',
    }),
    country: Type.Object({
      code: Type.String({ description: 'ISO 3166-1 alpha-2 (GR for EL numbers, XI for Northern Ireland).' }),
      name: Type.String(),
      vat: Nullable(
        Type.Object({
          name: Type.String({ description: 'Local name of the tax, e.g. `Umsatzsteuer`.' }),
          abbreviation: Type.String({ description: 'Its abbreviation, e.g. `USt`.' }),
          currency: Type.String({ description: 'ISO 4217 code used for invoicing.' }),
          standard_rate: Type.Number({ description: 'Percent (19 means 19%).' }),
          reduced_rates: Type.Array(Type.Number()),
          super_reduced_rate: Nullable(Type.Number()),
          parking_rate: Nullable(Type.Number()),
          number_format: Type.String({ description: 'The VAT number format, e.g. `DE + 9 digits`.' }),
          number_pattern: Type.String({ description: 'A regex matching the normalised VAT number.' }),
          updated_at: Type.String({ format: 'date', description: 'Day of the last review of this row.' }),
        }),
      ),
    }),
    company: Nullable(
      Type.Object(
        {
          name: Nullable(Type.String()),
          address: Nullable(Type.String()),
        },
        { description: 'As held by the registry; null when invalid or when the registry returns `---`.' },
      ),
    ),
    verify_id: Nullable(
      Type.String({
        description: 'Consultation number of the registry when `requester_vat_number` was given.',
      }),
    ),
    verified_at: Type.String({ format: 'date-time', description: 'When the registry gave this answer.' }),
    match: Type.Optional(Type.Ref('IdentityMatch')),
    peppol: Type.Optional(Type.Ref('PeppolPart')),
    registration_scope: Type.Optional(
      Type.Literal('domestic', {
        description:
          'On a national register\'s answer (`source_status: "fallback"`): a domestic VAT registration, which is not proof of registration for intra-EU supplies. Absent otherwise.',
      }),
    ),
  },
  { $id: 'ValidationData', title: 'ValidationData' },
);

/** The registries that answer. */
export const REGISTRY_SOURCES = ['vies', 'hmrc', 'bfs', 'brreg', ...NATIONAL_SOURCES] as const;

/** How fresh an answer is, best first. */
export const SOURCE_STATUSES = ['live', 'cached', 'degraded', 'fallback'] as const;

/** `meta.fallback`: why VIES did not answer, and the national register's answer. */
export const FallbackMetaSchema = Type.Object(
  {
    reason: Type.String({
      description:
        'The VIES error: its code (`MS_UNAVAILABLE`, `MS_MAX_CONCURRENT_REQ`, `TIMEOUT`, …) or `timeout`, `down`, `throttled`, `circuit_open`, `busy`.',
    }),
    message: Type.String({ description: "VIES's failure in words." }),
    checked_at: Type.String({ format: 'date-time', description: 'When the register answered.' }),
    data_date: Nullable(
      Type.String({ format: 'date', description: 'The date of the published file answered from (SI, LV).' }),
    ),
    register_status: Nullable(
      Type.String({
        description:
          "The register's own word for the status (`Czynny`, `Zwolniony`, `NE`, `ANO`, `scpTVA=true`, …); null when it does not list the number.",
      }),
    ),
    consultation_number: Nullable(
      Type.String({
        description: "The register's proof of this consultation (the Polish white list's `requestId`).",
      }),
    ),
    identifiers: Type.Record(Type.String(), Type.String(), {
      description:
        "The register's identifiers of the answer and the payer (`requestId`, `regon`, `dic`, `cui`, `businessId`, …).",
    }),
    flags: Type.Array(
      Type.Object({
        code: Type.String({ description: '`unreliable_payer` (CZ), `inactive_taxpayer` (RO), …' }),
        since: Nullable(Type.String({ format: 'date' })),
        register_value: Type.String({ description: "The register's own value, e.g. `ANO`." }),
      }),
    ),
  },
  { description: 'Present when `source_status` is `fallback`.' },
);

export const ValidationMetaFields = {
  cached: Type.Boolean({ description: 'True when the answer was stored earlier.' }),
  source: Literals(REGISTRY_SOURCES, {
    description:
      'The registry that gave the answer; for test keys, the registry a live key would have asked.',
  }),
  source_status: Literals(SOURCE_STATUSES, {
    description:
      "`live`: the registry answered now; `cached`: a stored answer within its TTL; `degraded`: the registry is down or throttling and an older stored answer was served; `fallback`: VIES could not answer and the member state's own register did (`meta.fallback`).",
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
  fallback: Type.Optional(FallbackMetaSchema),
};

/** The OpenAPI description of `validateOneVatNumber`. */
export const validateOneVatNumberDescription = `Checks the format and check digit locally (a malformed number is answered \`400 invalid_format\` at once, with \`error.details.reason\` = \`length\`, \`characters\`, \`checksum\` or \`country\`), then asks the registry (VIES, HMRC, the Swiss UID register or Brønnøysund) through a cache. An outage or throttling is never reported as \`valid: false\`: a stored answer is served with \`source_status: "degraded"\`, or the answer is \`502 registry_unavailable\` with \`Retry-After\`. A requester number the registry refuses (VIES \`INVALID_REQUESTER_INFO\`) is the caller's error: \`400 invalid_format\` with \`error.details.reason\` = \`requester\`. Unknown query parameters are ignored.\n\nTest keys (\`svc_test_…\`) never call a registry:\n\n${testModeTable()}`;
