import { Type } from '@sinclair/typebox';
import { Nullable } from '../../http/schemas.js';

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
          standard_rate: Type.Number(),
          reduced_rates: Type.Array(Type.Number()),
          super_reduced_rate: Nullable(Type.Number()),
          parking_rate: Nullable(Type.Number()),
          currency: Type.String(),
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
  },
  { $id: 'ValidationData', title: 'ValidationData' },
);

export const ValidationMetaFields = {
  cached: Type.Boolean({ description: 'True when the answer was stored earlier.' }),
  source: Type.Union(
    [
      Type.Literal('vies'),
      Type.Literal('hmrc'),
      Type.Literal('bfs'),
      Type.Literal('brreg'),
      Type.Literal('test'),
    ],
    { description: 'The registry that gave the answer (`test` for test keys).' },
  ),
  source_status: Type.Union([Type.Literal('live'), Type.Literal('cached'), Type.Literal('degraded')], {
    description:
      '`live`: the registry answered now; `cached`: a stored answer within its TTL; `degraded`: the registry is down or throttling and an older stored answer was served.',
  }),
  cached_at: Type.Optional(
    Type.String({ format: 'date-time', description: 'When the stored answer was obtained.' }),
  ),
  stale_seconds: Type.Optional(Type.Integer({ description: 'Age of the stored answer in seconds.' })),
};
