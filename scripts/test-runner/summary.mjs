// A node:test reporter that counts what ran, for the closing line of scripts/run-tests.mjs. It
// writes one JSON object to its destination when the run ends: the counts, and per test file the
// time its top-level tests and suites took (the runner schedules the slowest files first).
//
// Counted: every test as passed, failed, skipped or todo, once; the failures of a suite itself
// (a hook that threw, a body that threw, a test file that failed to load) as failures too. A suite
// whose only failure is that some of its tests failed is not counted again.
export default async function* summary(source) {
  const counts = { passed: 0, failed: 0, skipped: 0, todo: 0 };
  const durations = {};
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { data } = event;
    // A suite declared through skipped-suites.mjs is reported with that file as its own: left out.
    if (
      data.nesting === 0 &&
      data.file &&
      !data.file.includes('/scripts/test-runner/') &&
      typeof data.details?.duration_ms === 'number'
    )
      durations[data.file] = (durations[data.file] ?? 0) + data.details.duration_ms;
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
