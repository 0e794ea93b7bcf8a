// Module resolution hook (see preload.mjs): `node:test` resolves to skipped-suites.mjs, except from
// skipped-suites.mjs itself.
const wrapper = new URL('./skipped-suites.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (specifier === 'node:test' && context.parentURL !== wrapper) return { url: wrapper, shortCircuit: true };
  return next(specifier, context);
}
