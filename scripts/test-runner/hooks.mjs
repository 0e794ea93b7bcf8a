// Module resolution hook (see preload.mjs): `node:test` resolves to node-test.mjs, except from
// node-test.mjs itself.
const wrapper = new URL('./node-test.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (specifier === 'node:test' && context.parentURL !== wrapper) return { url: wrapper, shortCircuit: true };
  return next(specifier, context);
}
