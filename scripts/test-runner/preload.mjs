// Preloaded into every test process by scripts/run-tests.mjs: test files that import `node:test`
// get skipped-suites.mjs instead, which counts the tests of skipped suites as skipped tests.
//
// Where Node strips TypeScript types itself (22.18 and later, 24), the files run as they are, and
// an import of `./x.js` that names a `.ts` file in this checkout loads that file (the sources import
// what the build emits, as NodeNext asks). The hooks run in the module's own thread
// (`module.registerHooks`): per test file this halves the CPU its start takes against tsx, whose
// transform and loader thread Node 20 still needs (docs/development.md has the measurements).
import { existsSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';

const wrapper = new URL('./skipped-suites.mjs', import.meta.url).href;

if (typeof nodeModule.registerHooks === 'function') {
  const stripping = Boolean(process.features.typescript);
  nodeModule.registerHooks({
    resolve(specifier, context, next) {
      if (specifier === 'node:test' && context.parentURL !== wrapper)
        return { url: wrapper, shortCircuit: true };
      if (
        stripping &&
        specifier.endsWith('.js') &&
        specifier.startsWith('.') &&
        ownSource(context.parentURL)
      ) {
        const url = new URL(`${specifier.slice(0, -3)}.ts`, context.parentURL);
        if (existsSync(fileURLToPath(url)))
          return { url: url.href, format: 'module-typescript', shortCircuit: true };
      }
      return next(specifier, context);
    },
  });
} else {
  nodeModule.register('./hooks.mjs', import.meta.url);
}

/** Whether a module is a file of this checkout rather than an installed package. */
function ownSource(parentURL) {
  return parentURL?.startsWith('file:') === true && !parentURL.includes('/node_modules/');
}

// In each test file's own process: once its tests and hooks have all run and their results are
// reported, the process ends within 5 s even if a handle left open (a server that a failed `before`
// never closed) would keep it alive; the runner would otherwise wait for that file forever. The
// timer is unref'd: a process that ends by itself is not held up. (`--test-force-exit` does this
// too, but it also ends the runner itself before the summary reporter has written its file.)
if (process.env.NODE_TEST_CONTEXT === 'child-v8') {
  const { after } = await import('node:test');
  after(() => {
    setTimeout(() => process.exit(), 5_000).unref();
  });
}
