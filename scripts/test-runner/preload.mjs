// Preloaded into every test process by scripts/run-tests.mjs: test files that import `node:test`
// get skipped-suites.mjs instead, which counts the tests of skipped suites as skipped tests.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);

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
