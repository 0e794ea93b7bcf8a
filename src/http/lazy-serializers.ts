import {
  type Serializer,
  type SerializerFactory,
  SerializerSelector,
} from '@fastify/fast-json-stringify-compiler';

/**
 * Fastify's response serializers (fast-json-stringify, as by default), each compiled when its route
 * first answers with that status instead of when the app starts: compiling every route's response
 * schemas was most of the time `app.ready()` took (about a second of CPU per start, for a process
 * that then answers a few routes: a CLI command, a test, a new instance). A schema that cannot be
 * compiled fails that route's first answer (a 500) rather than the start; every route's schemas are
 * compiled by the contract and fuzzing tests.
 */
export function lazySerializers(): SerializerFactory {
  const build = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    return (route) => {
      let serialize: Serializer | undefined;
      return (doc) => {
        serialize ??= compile(route);
        return serialize(doc);
      };
    };
  };
}
