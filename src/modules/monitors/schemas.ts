import { Type } from '@sinclair/typebox';
import { Nullable, WholeNumberQuery } from '../../http/schemas.js';
import { INTERVALS } from './schedule.js';
import { BULK_LIMIT } from './service.js';
import { monitorTestModeTable } from './test-answers.js';

/** The OpenAPI description of `monitorManyVatNumbers`. */
export const monitorManyVatNumbersDescription = `Creates up to ${BULK_LIMIT.toLocaleString('en')} monitors in one call (more is \`400 batch_too_large\`); \`interval\` at the top applies to rows without their own (default \`daily\`). Answered at once: each new monitor is checked soon after, paced per member state. One result per row, in input order: a malformed or unsupported number, or one over the plan's cap (\`monitor_limit_reached\`), is listed with its reason while the other rows are created. Numbers the key already monitors are returned with \`created: false\`.`;

/** The OpenAPI description of `listMonitors`. */
export const listMonitorsDescription =
  "This key's monitors in creation order, a page at a time: pass `meta.next_cursor` as `cursor` for the next page (null on the last). Filters: `status`, `stale`, and `changed_since` (monitors with a change at or after that time).";

/** The OpenAPI description of `recentChanges`. */
export const recentChangesDescription =
  "The changes found on this key's monitors, newest first, each with its monitor's number and reference: a review of what changed since a date (`since`, ISO 8601).";

/** The OpenAPI description of `changeAMonitor`. */
export const changeAMonitorDescription =
  'Changes the interval, `reference` or `metadata` (`null` clears the last two); the history stays. A new interval moves the next check to the monitor’s place in it.';

/** The OpenAPI description of `checkAMonitorNow`. */
export const checkAMonitorNowDescription =
  'Asks the registry now (counts against the key\'s rate limit) and answers with the check and any change found, which is also sent as `vat_number.changed`. A registry that does not answer gives `200` with `check.outcome: "unavailable"`: the monitor keeps its state and is retried later.';

/** The OpenAPI description of `POST /v1/monitors`, with the plans' caps. */
export function createMonitorDescription(maxPerKey: Readonly<Record<'pro' | 'business', number>>): string {
  return `Keeps a VAT number checked (Pro: up to ${maxPerKey.pro.toLocaleString('en')} numbers per key, Business: ${maxPerKey.business.toLocaleString('en')}; more is \`403 monitor_limit_reached\`). Answers \`201\` with the monitor and its first check, made at once (a fresh stored answer is used). A number this key already monitors answers \`200\` with the existing monitor and its latest check. A malformed number gets the same errors as \`GET /v1/validate\`.\n\nEach later check asks the registry; a change (\`became_invalid\`, \`became_valid\`, \`name_changed\`, \`address_changed\`) is recorded and sent as a \`vat_number.changed\` webhook event. A registry that does not answer is never a change: the monitor keeps its state, the check is retried, and after a while without a successful check the monitor is flagged \`stale\` and \`vat_number.check_failed\` is sent once. Monitors of test keys send these events too, and have magic numbers:\n\n${monitorTestModeTable()}`;
}

/* The request and answer shapes of the monitors routes. */

/** Largest `metadata` object, as JSON. */
export const METADATA_MAX_BYTES = 4_096;

/** The page sizes of `GET /v1/monitors` and `GET /v1/monitors/changes`. */
export const LIST_LIMIT = { min: 1, max: 500 };
export const CHANGES_LIMIT = { min: 1, max: 1_000 };

export const IntervalSchema = Type.Union(
  INTERVALS.map((i) => Type.Literal(i)),
  { description: 'How often the number is checked; checks are spread evenly over the interval.' },
);
export const StatusSchema = Type.Union(
  [Type.Literal('valid'), Type.Literal('invalid'), Type.Literal('unknown')],
  {
    description: '`unknown` until a check succeeds.',
  },
);
export const CompanySchema = Nullable(
  Type.Object({ name: Nullable(Type.String()), address: Nullable(Type.String()) }),
);
export const Metadata = Type.Record(Type.String(), Type.Unknown(), {
  description: `Your own data (e.g. a customer id), returned as given; at most ${METADATA_MAX_BYTES.toLocaleString('en')} bytes as JSON.`,
  maxProperties: 50,
});

export const Monitor = Type.Object({
  id: Type.String({ format: 'uuid' }),
  vat_number: Type.String({ description: 'Normalised, with its prefix.' }),
  country_code: Type.String({ description: 'ISO 3166-1 alpha-2.' }),
  interval: IntervalSchema,
  reference: Nullable(Type.String()),
  metadata: Nullable(Metadata),
  status: StatusSchema,
  stale: Type.Boolean({
    description:
      'True once no check has succeeded for the configured time (the status is then the last known one).',
  }),
  company: CompanySchema,
  source: Nullable(Type.String({ description: 'The registry of the last successful check.' })),
  last_checked_at: Nullable(Type.String({ format: 'date-time', description: 'The last successful check.' })),
  last_attempt_at: Nullable(Type.String({ format: 'date-time' })),
  failing_since: Nullable(
    Type.String({
      format: 'date-time',
      description: 'The first failed check since the last successful one.',
    }),
  ),
  last_error: Nullable(Type.String()),
  last_change_at: Nullable(Type.String({ format: 'date-time' })),
  next_check_at: Type.String({ format: 'date-time' }),
  created_at: Type.String({ format: 'date-time' }),
  peppol: Nullable(
    Type.Object(
      {
        reachable: Nullable(
          Type.Boolean({ description: 'The last known `reachable`; null until a Peppol look-up answered.' }),
        ),
        can_receive_invoices: Nullable(
          Type.Boolean({
            description:
              'The last known `can_receive_invoices`; null while no registered participant’s SMP could be read (an unknown value never replaces a known one).',
          }),
        ),
        checked_at: Nullable(
          Type.String({ format: 'date-time', description: 'When the last Peppol answer was obtained.' }),
        ),
      },
      {
        description:
          'For a monitor with `"peppol": true`: the company’s Peppol reachability as last known (see docs/peppol.md); null for a monitor without.',
      },
    ),
  ),
});

export const Check = Type.Object({
  id: Type.String({ format: 'uuid' }),
  trigger: Type.Union([Type.Literal('created'), Type.Literal('scheduled'), Type.Literal('manual')]),
  outcome: Type.Union([Type.Literal('valid'), Type.Literal('invalid'), Type.Literal('unavailable')], {
    description:
      '`unavailable`: the registry did not answer; the monitor keeps its state and the check is retried. With `source_status: "fallback"`, VIES did not answer and this is what the national register answered: never a change, the monitor keeps its state and the check is retried.',
  }),
  source: Nullable(Type.String()),
  source_status: Nullable(Type.String()),
  company: CompanySchema,
  error: Nullable(Type.String()),
  request_id: Nullable(
    Type.String({
      description:
        'The audit record of the check (`GET /v1/audits/{request_id}`); null when no answer at all was obtained.',
    }),
  ),
  checked_at: Type.String({ format: 'date-time' }),
});

export const Change = Type.Object({
  id: Type.String({ format: 'uuid' }),
  type: Type.Union(
    [
      Type.Literal('became_invalid'),
      Type.Literal('became_valid'),
      Type.Literal('name_changed'),
      Type.Literal('address_changed'),
      Type.Literal('peppol_changed'),
    ],
    {
      description:
        'Names and addresses are compared without case and spacing differences. `peppol_changed` (monitors with `"peppol": true`): `reachable` or `can_receive_invoices` changed; its `before` and `after` are JSON texts `{"reachable":…,"can_receive_invoices":…}`.',
    },
  ),
  before: Nullable(Type.String()),
  after: Nullable(Type.String()),
  check_id: Type.String({ format: 'uuid' }),
  detected_at: Type.String({ format: 'date-time' }),
});

export const CheckResult = Type.Object({
  monitor: Monitor,
  check: Nullable(Check),
  changes: Type.Array(Change),
});

export const CreateBody = Type.Object(
  {
    vat_number: Type.String({ minLength: 1, maxLength: 256 }),
    interval: IntervalSchema,
    reference: Type.Optional(
      Type.String({ maxLength: 256, description: 'Your reference, e.g. a customer number.' }),
    ),
    metadata: Type.Optional(Metadata),
    peppol: Type.Optional(
      Type.Boolean({
        description:
          'Also check Peppol reachability on the schedule: a change of `reachable` or `can_receive_invoices` is recorded (`peppol_changed`) and sent as a `peppol.changed` webhook event. Needs the `peppol` scope.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const BulkBody = Type.Object(
  {
    interval: Type.Optional(IntervalSchema),
    peppol: Type.Optional(
      Type.Boolean({ description: 'The default `peppol` of the rows (false when not given).' }),
    ),
    monitors: Type.Array(
      Type.Object(
        {
          vat_number: Type.String({ maxLength: 256 }),
          interval: Type.Optional(IntervalSchema),
          reference: Type.Optional(Type.String({ maxLength: 256 })),
          metadata: Type.Optional(Metadata),
          peppol: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, description: `At most ${BULK_LIMIT.toLocaleString('en')}.` },
    ),
  },
  { additionalProperties: false },
);

export const BulkRow = Type.Union([
  Type.Object({
    ok: Type.Literal(true),
    id: Type.String({ format: 'uuid' }),
    vat_number: Type.String(),
    created: Type.Boolean({ description: 'False when the key already monitored the number.' }),
  }),
  Type.Object({
    ok: Type.Literal(false),
    vat_number: Type.String(),
    error: Type.Object({ code: Type.String(), message: Type.String() }),
  }),
]);

export const ListQuery = Type.Object(
  {
    status: Type.Optional(StatusSchema),
    changed_since: Type.Optional(
      Type.String({
        maxLength: 40,
        description: 'Only monitors with a change at or after this time (ISO 8601).',
      }),
    ),
    stale: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
    cursor: Type.Optional(
      Type.String({ maxLength: 64, description: '`meta.next_cursor` of the previous page.' }),
    ),
    limit: Type.Optional(
      WholeNumberQuery({ ...LIST_LIMIT, digits: 4, description: '1 to 500 (default 100).' }),
    ),
  },
  { additionalProperties: false },
);

export const IdParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);

/** An ISO 8601 date or time from a query parameter, as a UTC timestamp; 400 otherwise. */
