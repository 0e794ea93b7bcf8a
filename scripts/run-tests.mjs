#!/usr/bin/env node
// Runs every *.test.ts under test/ and clients/typescript/test/ with the built-in node:test runner (TypeScript through tsx).
// Node 20 has no glob support in `node --test`, so the files are listed here.
//
//   node scripts/run-tests.mjs [path-substring…]      only the files whose path contains one of them
//   node scripts/run-tests.mjs --dir DIR [substring…]  the files under DIR instead (test/fixtures/ is never searched otherwise)
//
// The run ends with one line, `N passed, N failed, N skipped`: skipped counts every test of a
// skipped suite too (see test-runner/skipped-suites.mjs), so a run without PostgreSQL or Redis says so.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function find(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (path !== join('test', 'fixtures')) out.push(...find(path));
    } else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const args = process.argv.slice(2);
const roots = [];
const filters = [];
for (let i = 0; i < args.length; i += 1) {
  if (args[i] === '--dir') roots.push(args[++i]);
  else filters.push(args[i]);
}
const files = (roots.length > 0 ? roots : ['test', 'clients/typescript/test'])
  .flatMap(find)
  .filter((f) => filters.length === 0 || filters.some((p) => f.includes(p)))
  .sort();
// With no file, `node --test` would search on its own (and run whatever it finds under dist/).
if (files.length === 0) {
  console.error(`No test file matches ${filters.map((f) => `"${f}"`).join(' or ')}.`);
  process.exit(1);
}

const here = new URL('.', import.meta.url);
const summaryDir = mkdtempSync(join(tmpdir(), 'openvat-tests-'));
const summaryFile = join(summaryDir, 'summary.json');
const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--import',
    new URL('test-runner/preload.mjs', here).href,
    '--test',
    '--test-concurrency=2',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${new URL('test-runner/summary.mjs', here).href}`,
    `--test-reporter-destination=${summaryFile}`,
    ...files,
  ],
  { stdio: 'inherit' },
);

let counts;
try {
  counts = JSON.parse(readFileSync(summaryFile, 'utf8'));
} catch {
  counts = null;
} finally {
  rmSync(summaryDir, { recursive: true, force: true });
}
if (counts === null) {
  console.log('the test run ended without a summary');
  process.exit(result.status || 1);
}
const todo = counts.todo > 0 ? `, ${counts.todo} todo` : '';
console.log(`${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped${todo}`);
process.exit(result.status ?? 1);
