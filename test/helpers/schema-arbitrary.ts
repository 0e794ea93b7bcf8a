import fc from 'fast-check';

/** The JSON Schema subset the routes' TypeBox schemas use. */
export interface JsonSchema {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  default?: unknown;
}

const FORMATS: Record<string, () => fc.Arbitrary<string>> = {
  date: () =>
    fc
      .date({
        min: new Date('1990-01-01T00:00:00Z'),
        max: new Date('2035-12-31T00:00:00Z'),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString().slice(0, 10)),
  'date-time': () =>
    fc
      .date({
        min: new Date('1990-01-01T00:00:00Z'),
        max: new Date('2035-12-31T00:00:00Z'),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString()),
  uuid: () => fc.uuid(),
  uri: () => fc.webUrl(),
  email: () => fc.emailAddress(),
};

function stringFor(schema: JsonSchema): fc.Arbitrary<string> {
  const format = schema.format ? FORMATS[schema.format] : undefined;
  if (format) return format();
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.min(schema.maxLength ?? 40, Math.max(minLength, 40));
  if (schema.pattern) {
    return fc
      .stringMatching(new RegExp(schema.pattern))
      .filter((s) => s.length >= minLength && s.length <= (schema.maxLength ?? Number.POSITIVE_INFINITY));
  }
  return fc.string({ minLength, maxLength });
}

/** Values the schema accepts (as far as the subset goes): the "valid" half of the generated requests. */
export function valid(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.constant(null);
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return fc.oneof(...union.map((s) => valid(s, depth + 1)));
  if (schema.allOf?.length === 1) return valid(schema.allOf[0], depth + 1);
  // A list of types (a nullable field is `["string", "null"]`): a value of any of them.
  if (Array.isArray(schema.type)) {
    return fc.oneof(...schema.type.map((type) => valid({ ...schema, type }, depth + 1)));
  }
  switch (schema.type) {
    case 'string':
      return stringFor(schema);
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1_000, max: schema.maximum ?? 1_000_000 });
    case 'number':
      return fc.double({
        min: schema.minimum ?? -1e6,
        max: schema.maximum ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(valid(schema.items, depth + 1), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 5, Math.max(schema.minItems ?? 0, 5)),
      });
    case 'object': {
      const properties = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, child] of Object.entries(properties)) record[name] = valid(child, depth + 1);
      return fc.record(record, {
        requiredKeys: Object.keys(properties).filter((name) => required.has(name)),
      });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Strings that have broken parsers before: unicode of every plane, lone surrogates, NUL bytes, huge. */
export function hostileString(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 30 }),
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.constantFrom(
      '\u0000',
      'DE\u0000123',
      '\uD800',
      '\uDFFF',
      '../../etc/passwd',
      "' OR 1=1 --",
      '%00',
      '0000-01-01',
      '9999-12-31',
      '-1',
      '1e309',
      'NaN',
      '\u202E',
      '🇩🇪',
      '__proto__',
    ),
    fc.integer({ min: 1_000, max: 200_000 }).map((n) => 'A'.repeat(n)),
  );
}

/** A value nested `depth` levels deep (arrays and objects alternating). */
function deeplyNested(depth: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
}

/** Values of the wrong kind for any schema: other types, hostile strings, huge numbers, deep nesting. */
export function hostileValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    hostileString(),
    fc.constantFrom(null, true, false, 0, -1, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 0.5, [], {}),
    fc.integer({ min: 10, max: 800 }).map(deeplyNested),
    fc.jsonValue({ maxDepth: 3 }),
  );
}

/**
 * Values built from the schema with one or more things wrong: a field of the wrong type or a hostile
 * value, an extra field, a missing required field, or something else entirely.
 */
export function mutated(schema: JsonSchema | undefined): fc.Arbitrary<unknown> {
  const properties = Object.keys(schema?.properties ?? {});
  const options: fc.Arbitrary<unknown>[] = [hostileValue()];
  if (schema?.type === 'object') {
    const base = valid(schema).filter(
      (v): v is Record<string, unknown> => typeof v === 'object' && v !== null,
    );
    options.push(
      fc
        .tuple(base, fc.string({ minLength: 1, maxLength: 20 }), hostileValue())
        .map(([object, name, value]) => ({ ...object, [name]: value })),
    );
    if (properties.length > 0) {
      options.push(
        fc
          .tuple(base, fc.constantFrom(...properties), hostileValue())
          .map(([object, name, value]) => ({ ...object, [name]: value })),
        fc.tuple(base, fc.constantFrom(...properties)).map(([object, name]) => {
          const copy = { ...object };
          delete copy[name];
          return copy;
        }),
      );
    }
  }
  return fc.oneof(...options);
}
