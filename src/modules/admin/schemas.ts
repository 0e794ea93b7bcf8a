import { type TProperties, Type } from '@sinclair/typebox';
import { Literals, Nullable } from '../../http/schemas.js';
import { MODES, PLANS, SCOPES } from '../keys/index.js';

const Metadata = Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 1000 }), {
  maxProperties: 50,
  description: 'Your own key-value pairs (text), at most 50.',
});

export const Id = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

export const Account = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Nullable(Type.String()),
  external_id: Nullable(Type.String()),
  metadata: Metadata,
  disabled: Type.Boolean({ description: 'A disabled account has every key refused.' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});

export const AccountCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    external_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);

export const AccountPatch = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    external_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
    metadata: Type.Optional(Metadata),
    disabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const Scopes = Nullable(
  Type.Array(Literals(SCOPES), {
    maxItems: SCOPES.length * 2,
    description: `Operations the key may call: ${SCOPES.join(', ')}; null = all its plan allows.`,
  }),
);
const Allowlist = Nullable(
  Type.Array(Type.String({ maxLength: 64 }), {
    maxItems: 100,
    description: 'Addresses or CIDRs (IPv4 and IPv6) the key may be used from; null = any.',
  }),
);

const settings = {
  name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  default_requester_vat: Type.Optional(Nullable(Type.String({ minLength: 3, maxLength: 32 }))),
  expires_at: Type.Optional(
    Nullable(Type.String({ format: 'date-time', description: 'When the key stops working; null = never.' })),
  ),
  scopes: Type.Optional(Scopes),
  ip_allowlist: Type.Optional(Allowlist),
  rate_limit_per_minute: Type.Optional(
    Nullable(Type.Integer({ minimum: 1, maximum: 100_000_000, description: "null = the plan's." })),
  ),
  monthly_quota: Type.Optional(
    Nullable(
      Type.Integer({
        minimum: 0,
        maximum: 1_000_000_000_000,
        description:
          "Calls per calendar month (UTC) of validate, decide, batch and confirm (answers from the cache not counted); null = the plan's default (`OPENVAT_MONTHLY_QUOTA_<PLAN>`, unlimited unless set). Beyond it: 429 `rate_limited` with `Retry-After` to the next month.",
      }),
    ),
  ),
  metadata: Type.Optional(Metadata),
};

export const KeyCreate = Type.Object(
  {
    account_id: Type.String({ format: 'uuid' }),
    plan: Literals(PLANS),
    mode: Literals(MODES),
    ...settings,
  },
  { additionalProperties: false },
);

export const KeyPatch = Type.Object(settings, { additionalProperties: false });

export const Key = Type.Object({
  id: Type.String({ format: 'uuid' }),
  account_id: Type.String({ format: 'uuid' }),
  name: Nullable(Type.String()),
  prefix: Type.String({ description: 'The first characters of the key, e.g. `svc_live_3kQ9`.' }),
  plan: Literals(PLANS),
  mode: Literals(MODES),
  status: Literals(['active', 'expired', 'revoked'] as const),
  default_requester_vat: Nullable(Type.String()),
  expires_at: Nullable(Type.String({ format: 'date-time' })),
  scopes: Scopes,
  ip_allowlist: Allowlist,
  rate_limit_per_minute: Nullable(Type.Integer()),
  monthly_quota: Nullable(Type.Integer()),
  metadata: Metadata,
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: Nullable(
    Type.String({
      format: 'date',
      description: 'The last UTC day the key made a request (from its usage counts).',
    }),
  ),
  revoked_at: Nullable(Type.String({ format: 'date-time' })),
  rolled_to: Nullable(Type.String({ format: 'uuid' })),
  usage_this_month: Type.Integer({
    description:
      "This calendar month (UTC): for a key with a quota (its own or its plan's), the calls counted against it; for a key without, its requests.",
  }),
});

export const KeyWithSecret = Type.Composite([
  Key,
  Type.Object({ key: Type.String({ description: 'The secret key, shown this once.' }) }),
]);

export const Roll = Type.Object(
  {
    overlap_seconds: Type.Integer({
      minimum: 0,
      maximum: 7 * 86_400,
      description: 'How long the old key keeps working (0 to 7 days).',
    }),
  },
  { additionalProperties: false },
);

export const Paging = {
  cursor: Type.Optional(
    Type.String({ maxLength: 64, description: '`meta.next_cursor` of the previous page.' }),
  ),
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', description: '1–200, default 50.' })),
};

export const AuditEntry = Type.Object({
  id: Type.String({ format: 'uuid' }),
  actor: Type.Object({ id: Type.String(), name: Type.String() }),
  action: Type.String({
    description:
      '`account.create`, `account.update`, `key.create`, `key.update`, `key.revoke`, `key.roll`, `admin_key.create`, `admin_key.revoke`, `rate_change.accept`, `rate_change.reject`.',
  }),
  target: Type.Object({ type: Type.String(), id: Type.String() }),
  changes: Type.Record(Type.String(), Type.Unknown()),
  request_id: Nullable(Type.String()),
  client_address: Nullable(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
});

export const UsageRow = Type.Object({
  account_id: Type.String(),
  key_id: Type.String(),
  day: Type.String({ format: 'date' }),
  operation: Type.String(),
  requests: Type.Integer(),
  errors: Type.Integer(),
});

export const Query = <T extends TProperties>(properties: T) =>
  Type.Object(properties, { additionalProperties: false });
