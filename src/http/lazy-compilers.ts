import AjvCompiler from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>;
type Validate = ((data: unknown) => unknown) & { errors?: unknown };

/**
 * Fastify's own compilers (Ajv for what a request carries, fast-json-stringify for responses),
 * each route's schema compiled on the route's first use instead of at `ready()`: an idle service
 * holds no compiled schemas of routes nobody called, and starts without compiling them. The
 * functions compiled are the same, so what is accepted, refused and sent is the same; a schema that
 * does not compile fails its route's first request (a 500) rather than the start; every route's
 * schemas are compiled by the contract and fuzzing tests.
 */
export function lazySchemaController(): SchemaController {
  const buildValidator = AjvCompiler();
  const buildSerializer = SerializerSelector();
  return {
    compilersFactory: {
      buildValidator: (...factoryArgs: Parameters<typeof buildValidator>) => {
        const compile = buildValidator(...factoryArgs);
        return (route: Parameters<typeof compile>[0]) => {
          let compiled: Validate | undefined;
          const validate: Validate = (data) => {
            compiled ??= compile(route) as Validate;
            const result = compiled(data);
            validate.errors = compiled.errors;
            return result;
          };
          return validate;
        };
      },
      buildSerializer: (...factoryArgs: Parameters<typeof buildSerializer>) => {
        const compile = buildSerializer(...factoryArgs);
        return (route: Parameters<typeof compile>[0]) => {
          let compiled: ((doc: unknown) => string) | undefined;
          return (doc: unknown) => {
            compiled ??= compile(route);
            return compiled(doc);
          };
        };
      },
    },
  } as SchemaController;
}
