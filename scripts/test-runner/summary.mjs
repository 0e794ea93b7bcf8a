// A node:test reporter that counts what ran, for the closing line of scripts/run-tests.mjs. It
// writes one JSON object to its destination when the run ends: the counts, and per test file its
// wall time (the runner schedules the slowest files first and lists them at the end).
//
// Counted: every test as passed, failed, skipped or todo, once; the failures of a suite itself
// (a hook that threw, a body that threw, a test file that failed to load) as failures too. A suite
// whose only failure is that some of its tests failed is not counted again.
import { resolve } from 'node:path';

/**
 * The event that ends a test file's own process: node:test reports each file run in a process of
 * its own as a top-level test named after the file (its path as given on Node 22 and later, the
 * absolute path on Node 20) whose duration is the process's wall time, start-up and imports
 * included. The tests and suites inside it are not summed instead: a suite declared through
 * skipped-suites.mjs is reported with that file as its own.
 */
function fileDuration(event) {
  const { data } = event;
  if (data.nesting !== 0 || !data.file || typeof data.name !== 'string') return undefined;
  if (resolve(data.name) !== data.file) return undefined;
  return typeof data.details?.duration_ms === 'number' ? data.details.duration_ms : undefined;
}

export default async function* summary(source) {
  const counts = { passed: 0, failed: 0, skipped: 0, todo: 0 };
  const durations = {};
  for await (const event of source) {
    if (event.type === 'test:complete') {
      const ms = fileDuration(event);
      if (ms !== undefined) durations[event.data.file] = ms;
      continue;
    }
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { data } = event;
    if (data.details?.type === 'suite') {
      if (event.type === 'test:fail' && data.details.error?.failureType !== 'subtestsFailed')
        counts.failed += 1;
      continue;
    }
    if (data.todo !== undefined && data.todo !== false) counts.todo += 1;
    else if (data.skip !== undefined && data.skip !== false) counts.skipped += 1;
    else if (event.type === 'test:pass') counts.passed += 1;
    else counts.failed += 1;
  }
  yield `${JSON.stringify({ ...counts, durations })}\n`;
}
