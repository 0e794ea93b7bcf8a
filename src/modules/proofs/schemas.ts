import { Type } from '@sinclair/typebox';
import { Nullable } from '../../http/schemas.js';

const MatchCode = Nullable(
  Type.Union([Type.Literal('A'), Type.Literal('B'), Type.Literal('C'), Type.Literal('D')], {
    description:
      'A = matches, B = does not match, C = not requested (not supplied), D = not provided by the registry.',
  }),
);
const Time = Type.String({ format: 'date-time' });

/** `data` of a proof in JSON: the same facts as the PDF. */
export const ProofSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('confirmation'), Type.Literal('validation')]),
    id: Type.String({ description: "The confirmation's id, or the audit record's `request_id`." }),
    request_id: Type.String({ description: 'The `meta.request_id` of the original response.' }),
    mode: Type.Union([Type.Literal('live'), Type.Literal('test')]),
    language: Type.Union([Type.Literal('de'), Type.Literal('en')], {
      description: "`?lang=`, else `Accept-Language`, else the requester's country (de for DE, AT, CH, LI).",
    }),
    generated_at: Time,
    asked: Type.Object({
      requester_vat_number: Nullable(Type.String()),
      vat_number: Type.String({ description: 'The number asked about, normalised with its prefix.' }),
      company: Nullable(
        Type.Object(
          {
            name: Nullable(Type.String()),
            street: Nullable(Type.String()),
            postcode: Nullable(Type.String()),
            town: Nullable(Type.String()),
          },
          { description: 'The details sent for comparison (null: not sent); null for a validation.' },
        ),
      ),
    }),
    answer: Type.Object({
      source: Type.String({
        description:
          '`taxauth` (eVatR), `vies`, `hmrc`, `bfs` or `brreg`, or a national register (`pl_whitelist`, `cz_adis`, `ro_anaf`, `fi_prh`, `sk_financnasprava`, `si_furs`, `lv_vid`).',
      }),
      status_code: Nullable(Type.String({ description: "The authority's status, e.g. `taxauth-0000`." })),
      status_text: Nullable(Type.String({ description: 'Its meaning, in the proof language.' })),
      valid: Nullable(Type.Boolean()),
      qualified: Nullable(Type.Boolean()),
      matches: Nullable(
        Type.Object({ name: MatchCode, street: MatchCode, postcode: MatchCode, town: MatchCode }),
      ),
      company: Nullable(
        Type.Object(
          {
            name: Nullable(Type.String()),
            street: Nullable(Type.String()),
            postcode: Nullable(Type.String()),
            town: Nullable(Type.String()),
            address: Nullable(Type.String()),
          },
          { description: 'Company data as held by the registry, where it returned any.' },
        ),
      ),
      valid_from: Nullable(Type.String()),
      valid_to: Nullable(Type.String()),
      taxauth_id: Nullable(Type.String({ description: "eVatR's own request id." })),
      consultation_number: Nullable(Type.String({ description: "The registry's consultation number." })),
      authority_time: Nullable(
        Type.String({
          description: "The authority's time of the request, as it sent it (`anfrageZeitpunkt`).",
        }),
      ),
      register: Nullable(
        Type.Object(
          {
            source_status: Type.Literal('fallback'),
            registration_scope: Type.Literal('domestic'),
            reason: Nullable(Type.String({ description: 'Why VIES did not answer (`MS_UNAVAILABLE`, …).' })),
            register_status: Nullable(Type.String({ description: "The register's word (`Czynny`, `NE`)." })),
            data_date: Nullable(Type.String({ description: 'The date of the published file (SI, LV).' })),
            checked_at: Nullable(Type.String()),
            identifiers: Type.Record(Type.String(), Type.String(), {
              description: "The register's identifiers (`requestId`, `regon`, `dic`, `cui`, …).",
            }),
            flags: Type.Array(
              Type.Object({
                code: Type.String(),
                since: Nullable(Type.String()),
                register_value: Nullable(Type.String()),
              }),
            ),
          },
          {
            description:
              "A national register's answer given because VIES could not answer (`meta.fallback` of the audited response): a domestic registration only; null otherwise.",
          },
        ),
      ),
    }),
    times: Type.Object({
      received_at: Nullable(Time),
      answered_at: Nullable(Time),
      stored_at: Time,
      kept_until: Time,
    }),
    record: Type.Object({
      algorithm: Type.Literal('sha256'),
      hash: Type.String({
        description:
          "A confirmation's chain hash; for an audit record, SHA-256 of the stored response, byte for byte.",
      }),
      hash_matches: Nullable(
        Type.Boolean({
          description: 'The hash computed again from the stored record matched (confirmations).',
        }),
      ),
    }),
    chain: Nullable(
      Type.Object(
        { seq: Type.Integer(), prev_hash: Type.String() },
        { description: 'Place in the evidence chain; null for an audit record (not in the chain).' },
      ),
    ),
    signed_head: Nullable(
      Type.Object(
        {
          seq: Type.Integer(),
          hash: Type.String(),
          signature: Nullable(
            Type.String({ description: 'Ed25519 (base64); null when heads are not signed.' }),
          ),
          signature_valid: Nullable(Type.Boolean()),
          public_key: Nullable(Type.String({ description: 'PEM (SPKI).' })),
        },
        { description: 'The newest chain head, which covers the record.' },
      ),
    ),
    timestamp: Nullable(
      Type.Object(
        {
          head_seq: Type.Integer(),
          gen_time: Time,
          tsa_url: Type.String(),
        },
        { description: 'The newest RFC 3161 time-stamp token over a head that covers the record.' },
      ),
    ),
    verification: Type.Array(Type.String(), { description: 'How to verify, step by step.' }),
  },
  { $id: 'Proof', title: 'Proof' },
);

export const proofDescription = (what: string) =>
  `${what} A PDF (A4, text only, no scripts or actions) by default; the same facts as JSON with \`Accept: application/json\`. Language: \`?lang=de|en\`, else the first of \`Accept-Language\` that exists, else the requester's country (German for DE, AT, CH and LI requesters), else English.`;
