// `node:test` as test files see it when run by scripts/run-tests.mjs (see preload.mjs).
//
// node:test does not run the body of a skipped suite (`describe(name, { skip: reason }, fn)`), so
// the tests in it are never registered and no count shows them: a run without PostgreSQL said
// "skipped 0" while whole suites were left out. Here a skipped suite's body runs instead, inside a
// suite that is not skipped, with `it`/`test` registering each test as skipped (with the suite's
// reason, never running it) and the hooks doing nothing; a suite nested in it does the same. Every
// test that did not run is then reported, and counted, as skipped. Everything else is node:test's.
import * as real from 'node:test';

export { mock, only, run, skip, todo } from 'node:test';
export default real.default;

/** `describe(name?, options?, fn?)` and `it(name?, options?, fn?)` in any of their shapes. */
function parse(args) {
  const rest = [...args];
  const name = typeof rest[0] === 'string' ? rest.shift() : undefined;
  const options = rest[0] !== null && typeof rest[0] === 'object' ? rest.shift() : {};
  const fn = typeof rest[0] === 'function' ? rest.shift() : undefined;
  return { name: name ?? fn?.name ?? '<anonymous>', options, fn };
}

function withVariants(register, variants) {
  return Object.assign(register, variants);
}

/** A test registered as skipped, whatever it asked for. */
function skippedTest(reason) {
  const register = (...args) => real.it(parse(args).name, { skip: reason });
  return withVariants(register, { skip: register, only: register, todo: register });
}

/** A suite inside a skipped one: its body runs too, under the same replacements. */
function nestedSuite() {
  const register = (...args) => {
    const { name, fn } = parse(args);
    return real.describe(name, fn ?? (() => {}));
  };
  return withVariants(register, { skip: register, only: register, todo: register });
}

const noHook = () => {};

/** `describe`/`suite` that count the tests of a skipped suite as skipped tests. */
function countingSuite(suite, forced) {
  const register = (...args) => {
    const { name, options, fn } = parse(args);
    const skipped = forced ?? options.skip;
    if (!skipped || fn === undefined) return suite(...args);
    const { skip: _skip, todo: _todo, only: _only, ...rest } = options;
    return real.describe(name, rest, () => runSkipped(typeof skipped === 'string' ? skipped : true, fn));
  };
  // `describe.skip(…)` is a suite skipped without a reason.
  const skipVariant = forced ? register : countingSuite(suite, true);
  return withVariants(register, { skip: skipVariant, only: suite.only, todo: suite.todo });
}

const counting = { describe: countingSuite(real.describe), suite: countingSuite(real.suite) };

export let describe = counting.describe;
export let suite = counting.suite;
export let it = real.it;
export let test = real.test;
export let before = real.before;
export let after = real.after;
export let beforeEach = real.beforeEach;
export let afterEach = real.afterEach;

let depth = 0;

function swap(reason) {
  if (reason === null) {
    ({ describe, suite } = counting);
    ({ it, test, before, after, beforeEach, afterEach } = real);
    return;
  }
  it = test = skippedTest(reason);
  describe = suite = nestedSuite();
  before = after = beforeEach = afterEach = noHook;
}

/** Runs a skipped suite's body with every test registered as skipped and the hooks inert. */
function runSkipped(reason, fn) {
  if (depth === 0) swap(reason);
  depth += 1;
  const restore = () => {
    depth -= 1;
    if (depth === 0) swap(null);
  };
  let result;
  try {
    result = fn();
  } catch (error) {
    restore();
    throw error;
  }
  if (result && typeof result.then === 'function') return result.finally(restore);
  restore();
  return result;
}
