import { type TSchema, Type } from '@sinclair/typebox';
import { ERROR_CODES } from '../lib/errors.js';

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

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
export const errorResponses = {
  '4xx': Type.Ref('ErrorEnvelope'),
  '5xx': Type.Ref('ErrorEnvelope'),
};
