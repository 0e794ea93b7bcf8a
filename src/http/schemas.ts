import { type SchemaOptions, type TSchema, Type } from '@sinclair/typebox';
import { ERROR_CODES } from '../lib/errors.js';

export const Nullable = <T extends TSchema>(schema: T, options?: SchemaOptions) =>
  Type.Union([schema, Type.Null()], options);

export const MetaBase = {
  request_id: Type.String({ format: 'uuid', description: 'Identifies this HTTP request (UUID v7).' }),
  latency_ms: Type.Integer({ minimum: 0, description: 'Processing time in whole milliseconds.' }),
};

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.Union(
        ERROR_CODES.map((c) => Type.Literal(c)),
        { description: 'Machine-readable error code from a closed list.' },
      ),
      message: Type.String({ description: 'What went wrong and how to fix it.' }),
      details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
    meta: Type.Object(MetaBase),
  },
  { $id: 'ErrorEnvelope', title: 'Error' },
);

/** The `{ data, meta }` envelope of a success response. */
export function Envelope<D extends TSchema, M extends Record<string, TSchema>>(data: D, meta?: M) {
  return Type.Object({ data, meta: Type.Object({ ...MetaBase, ...(meta ?? ({} as M)) }) });
}

/** Error responses every route can give; documented once and serialised through the same schema. */
/** How every route's schema is checked (the admin API run in-process by the CLI checks the same way). */
export const AJV_OPTIONS = {
  removeAdditional: false,
  coerceTypes: false,
  useDefaults: true,
  allErrors: false,
} as const;

export const errorResponses = {
  '4xx': Type.Ref('ErrorEnvelope'),
  '5xx': Type.Ref('ErrorEnvelope'),
};

/** Marks a query parameter's schema as a whole number in a range (query values are text). */
export const WHOLE_NUMBER_RANGE = Symbol('openvat.wholeNumberRange');

/** The refusal of a query parameter that is not a whole number in its range. */
export function wholeNumberMessage(name: string, range: { min: number; max: number }): string {
  return `${name} must be a whole number between ${range.min} and ${range.max}.`;
}

/**
 * A query parameter holding a whole number from `min` to `max`, written with at most `digits`
 * digits; a value that is not one is refused with `wholeNumberMessage` (the handler checks the range).
 */
export function WholeNumberQuery(options: { min: number; max: number; digits: number; description: string }) {
  return Type.String({
    pattern: `^[0-9]{1,${options.digits}}$`,
    description: options.description,
    [WHOLE_NUMBER_RANGE]: { min: options.min, max: options.max },
  });
}
