// Preloaded into every test process by scripts/run-tests.mjs: test files that import `node:test`
// get skipped-suites.mjs instead, which counts the tests of skipped suites as skipped tests.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
