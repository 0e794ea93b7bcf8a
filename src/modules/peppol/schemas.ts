import { Type } from '@sinclair/typebox';
import { Literals, Nullable } from '../../http/schemas.js';
import { peppolTestTable } from './test-answers.js';

export const SMP_STATUSES = ['ok', 'not_found', 'unavailable', 'refused', 'no_smp'] as const;

const DocumentType = Type.Object({
  id: Type.String({ description: 'The document type identifier `scheme::value`, as the SMP lists it.' }),
  name: Nullable(
    Type.String({ description: 'Its name in the Peppol document types code list; null when not listed.' }),
  ),
  invoice: Type.Boolean({
    description:
      'An invoice of Peppol BIS Billing 3.0, of another CIUS of EN 16931 (XRechnung among them) or of EN 16931 itself.',
  }),
});

const Participant = Type.Object({
  id: Type.String({ description: '`ICD:value`, the value in lower case, e.g. `0208:0677424046`.' }),
  icd: Type.String({ description: 'The scheme (ISO 6523 ICD), e.g. `0208`.' }),
  scheme_name: Type.String({ description: 'The scheme ID of the Peppol code list, e.g. `BE:EN`.' }),
  registered: Nullable(
    Type.Boolean({
      description:
        'The SML publishes a record for it (NXDOMAIN or NODATA: false). A DNS failure is never false: a stored answer is served, or it is null (`sml_status: "unavailable"`) when another participant is registered, else the look-up is 502.',
    }),
  ),
  sml_status: Literals(['ok', 'unavailable'] as const, {
    description:
      '`ok`: the SML answered for it (now, or a stored answer); `unavailable`: its DNS look-up failed and nothing is stored, so `registered` is null.',
  }),
  sml_error: Nullable(
    Type.String({ description: 'Why the SML could not be asked for it; null when it answered.' }),
  ),
  smp_url: Nullable(Type.String({ description: 'The SMP base URL the SML gives; null when none.' })),
  smp_status: Nullable(
    Literals(SMP_STATUSES, {
      description:
        '`ok`: its ServiceGroup was read; `not_found`: the SMP does not know it (404); `unavailable`: the SMP failed; `refused`: its address is not public https (no request made); `no_smp`: the SML record gives no usable SMP address. Null when not registered.',
    }),
  ),
  document_types: Nullable(
    Type.Array(DocumentType, {
      description: 'What the SMP lists for it; null when the SMP could not be read.',
    }),
  ),
  business_card: Nullable(
    Type.Object(
      { name: Type.String(), country_code: Nullable(Type.String()) },
      { description: 'The business card its SMP publishes (Peppol Directory), as declared; null when none.' },
    ),
  ),
});

export const PeppolDataSchema = Type.Object(
  {
    identifier: Type.String({
      description: 'The normalised VAT number, or `iso6523-actorid-upis::ICD:value`.',
    }),
    reachable: Type.Boolean({ description: 'At least one participant is registered in the SML.' }),
    can_receive_invoices: Nullable(
      Type.Boolean({
        description:
          'A registered participant lists a Peppol BIS Billing 3.0 invoice or one of an EN 16931 CIUS; null when no registered participant’s SMP could be read.',
      }),
    ),
    participants: Type.Array(Participant, {
      description: 'Every identifier looked up, in the order of the mapping (docs/peppol.md).',
    }),
    checked_at: Type.String({
      format: 'date-time',
      description: 'When the oldest part of the answer was obtained.',
    }),
  },
  { $id: 'PeppolData', title: 'PeppolData' },
);

export const PeppolMetaFields = {
  cached: Type.Boolean({ description: 'True when every participant was answered from the store.' }),
  source: Literals(['peppol'] as const),
  source_status: Literals(['live', 'cached', 'degraded'] as const, {
    description:
      '`live`: asked now (or partly); `cached`: stored answers within their TTL; `degraded`: the SML could not be asked for a participant, and an older stored answer was served or the participant is unknown (`sml_status: "unavailable"`).',
  }),
  cached_at: Nullable(
    Type.String({
      format: 'date-time',
      description: 'When the oldest stored part was obtained; null when none.',
    }),
  ),
  stale_seconds: Nullable(
    Type.Integer({ minimum: 0, description: 'Age of that part in seconds; null when none.' }),
  ),
};

export const peppolLookupDescription = `Whether a company can receive e-invoices over Peppol. \`identifier\` is a VAT number (normalised and checked as \`validate\` does; every participant identifier it may be registered under is looked up: its country's VAT scheme and the national identifiers it contains), a participant identifier \`ICD:value\`, or \`iso6523-actorid-upis::ICD:value\`. Each is asked of the Peppol SML over DNS, then of its SMP. NXDOMAIN is "not registered"; a DNS failure never is: a stored answer is served with \`source_status: "degraded"\`, or the answer is \`502 registry_unavailable\` with \`Retry-After\`.\n\nTest keys (\`svc_test_…\`) never send a DNS query; every other identifier is not registered:\n\n${peppolTestTable()}`;

/** `data.peppol` of a validation with `include=peppol`: the look-up's data, or its error alone. */
export const PeppolPartSchema = Type.Union(
  [
    Type.Ref('PeppolData'),
    Type.Object(
      {
        error: Type.Object({
          code: Literals(['registry_unavailable', 'country_unsupported', 'invalid_format'] as const, {
            description:
              '`registry_unavailable`: the SML could not be asked and nothing is stored (ask again later); `country_unsupported`: no Peppol scheme is known for the country; `invalid_format`: the number has no Peppol identifier.',
          }),
          message: Type.String(),
        }),
      },
      {
        description:
          'The Peppol look-up gave no answer. The VAT answer around it is unaffected: a Peppol outage never fails a validation nor changes `valid`.',
      },
    ),
  ],
  {
    $id: 'PeppolPart',
    title: 'PeppolPart',
    description:
      'With `include=peppol`: whether the company can receive e-invoices over Peppol, as `GET /v1/peppol/{identifier}` answers for the normalised VAT number (see docs/peppol.md), or `{ error }` for this part alone.',
  },
);
