#!/usr/bin/env node
// Runs every *.test.ts under test/ and clients/typescript/test/ with the built-in node:test runner (TypeScript through tsx).
// Node 20 has no glob support in `node --test`, so the files are listed here.
//
//   node scripts/run-tests.mjs [path-substring…]      only the files whose path contains one of them
//   node scripts/run-tests.mjs --dir DIR [substring…]  the files under DIR instead (test/fixtures/ is never searched otherwise)
//
// The run ends with one line, `N passed, N failed, N skipped`: skipped counts every test of a
// skipped suite too (see test-runner/skipped-suites.mjs), so a run without PostgreSQL or Redis says so.
//
// PostgreSQL and Redis: TEST_DATABASE_URL and TEST_REDIS_URL when set (`off` leaves that service out);
// otherwise a server listening on its standard local port (127.0.0.1:5432, database `test`, user
// `postgres`; 127.0.0.1:6379) is used. The run says at its start which it used.
//
// What the tests make there is named after the run (`# run …` at the start, see
// test-runner/resources.mjs): each test process drops its own as it exits, and at the end the run
// drops its template database and anything still left, which it names and counts as a failure.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { describeLeftovers, dropLeftovers } from './test-runner/resources.mjs';

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

// The slowest files first, so that the last minutes of a run are not one long file alone: by the
// time each file's tests took in the last run on this machine (node_modules/.cache/openvat-tests/),
// else as measured when test-runner/durations.json was written, else by tier.
const durationsFile = join('node_modules', '.cache', 'openvat-tests', 'durations.json');
function readDurations(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return {};
  }
}
const known = {
  ...readDurations(new URL('test-runner/durations.json', import.meta.url)),
  ...readDurations(durationsFile),
};
const guess = (f) =>
  known[f] ?? (f.includes('/e2e/') ? 30_000 : /\/(integration|browser)\//.test(f) ? 10_000 : 1_000);
files.sort((a, b) => guess(b) - guess(a) || a.localeCompare(b));

// Tests that spawn the CLI run the built one (test/helpers/cli.ts): dist/ is rebuilt first when a
// file under src/ is newer than it.
function newest(dir) {
  let latest = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = statSync(path);
    latest = Math.max(latest, stat.isDirectory() ? newest(path) : stat.mtimeMs);
  }
  return latest;
}
const spawnsCli = files.some((f) =>
  /helpers\/(cli|processes|evidence-cli)\.js/.test(readFileSync(f, 'utf8')),
);
if (spawnsCli) {
  const built = join('dist', 'cli', 'index.js');
  const builtAt = existsSync(built) ? statSync(built).mtimeMs : 0;
  if (Math.max(newest('src'), statSync(join('scripts', 'build.mjs')).mtimeMs) > builtAt) {
    console.log('# dist/ is older than src/: building it (node scripts/build.mjs)');
    const bundle = spawnSync(process.execPath, [join('scripts', 'build.mjs')], { stdio: 'inherit' });
    if (bundle.status !== 0) {
      console.error('the build failed: the tests that spawn the CLI need dist/');
      process.exit(1);
    }
  }
}

const services = [
  {
    name: 'PostgreSQL',
    variable: 'TEST_DATABASE_URL',
    port: 5432,
    url: 'postgres://postgres@127.0.0.1:5432/test',
  },
  { name: 'Redis', variable: 'TEST_REDIS_URL', port: 6379, url: 'redis://127.0.0.1:6379' },
];
for (const service of services) {
  const given = process.env[service.variable];
  if (given === 'off') {
    console.log(`# ${service.name}: off (${service.variable}=off): its tests skip`);
  } else if (given) {
    console.log(`# ${service.name}: ${given.replace(/\/\/[^@/]*@/, '//***@')} (from ${service.variable})`);
  } else if (listens(service.port)) {
    process.env[service.variable] = service.url;
    console.log(
      `# ${service.name}: ${service.url} (found on 127.0.0.1:${service.port}; set ${service.variable} to use another)`,
    );
  } else {
    console.log(
      `# ${service.name}: none on 127.0.0.1:${service.port} and ${service.variable} unset: its tests skip`,
    );
  }
}

// Always a new id: a run started inside a test (test/unit/run-tests.test.ts) must not take the
// outer run's, whose databases it would drop at its end.
const run = randomBytes(3).toString('hex');
process.env.OPENVAT_TEST_RUN = run;
console.log(`# run ${run}: PostgreSQL schemas and databases t_${run}_…, Redis keys openvat-test:${run}:…`);

const here = new URL('.', import.meta.url);
const summaryDir = mkdtempSync(join(tmpdir(), 'openvat-tests-'));
const summaryFile = join(summaryDir, 'summary.json');
/** Whether something accepts TCP connections on 127.0.0.1:port (asked of a short-lived child, within 1 s). */
function listens(port) {
  const probe = spawnSync(
    process.execPath,
    [
      '-e',
      `const s = require('node:net').connect(${port}, '127.0.0.1');
       s.setTimeout(1000, () => process.exit(1));
       s.on('connect', () => process.exit(0));
       s.on('error', () => process.exit(1));`,
    ],
    { stdio: 'ignore', timeout: 2_000 },
  );
  return probe.status === 0;
}

// How many test files run at a time: OPENVAT_TEST_CONCURRENCY, else two per core (the files mostly
// wait on timers, sockets and child processes; docs/development.md has the measurements).
const concurrency = (() => {
  const given = process.env.OPENVAT_TEST_CONCURRENCY;
  if (given === undefined || given === '') return Math.max(2, 2 * availableParallelism());
  const n = Number(given);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`OPENVAT_TEST_CONCURRENCY must be a whole number of files, 1 or more (not "${given}")`);
    process.exit(1);
  }
  return n;
})();
console.log(`# ${concurrency} test files at a time (OPENVAT_TEST_CONCURRENCY to change it)`);

// Node 22 and later keep the code V8 compiled for each module here and reuse it in the next process
// (every test file, CLI and server process loads much the same modules); Node 20 ignores it.
process.env.NODE_COMPILE_CACHE ??= resolve('node_modules', '.cache', 'openvat-tests', 'v8');

// TypeScript: Node's own type stripping where it has it (22.18 and later), tsx on Node 20 (see
// test-runner/preload.mjs).
const typescript = process.features.typescript ? [] : ['--import', 'tsx'];
console.log(`# TypeScript: ${process.features.typescript ? "Node's type stripping" : 'tsx'}`);

const result = spawnSync(
  process.execPath,
  [
    ...typescript,
    '--import',
    new URL('test-runner/preload.mjs', here).href,
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${new URL('test-runner/summary.mjs', here).href}`,
    `--test-reporter-destination=${summaryFile}`,
    ...files,
  ],
  { stdio: 'inherit' },
);

const leftovers = await dropLeftovers({
  run,
  databaseUrl: process.env.TEST_DATABASE_URL,
  redisUrl: process.env.TEST_REDIS_URL,
  template: true,
});
const left = describeLeftovers(leftovers);
for (const line of left) console.log(`# left behind by the tests (dropped now): ${line}`);
// A server that cannot be reached held nothing of this run's (its tests skipped or failed): a notice.
for (const error of leftovers.errors) console.log(`# notice: clean-up at the end of the run: ${error}`);
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
const measured = Object.fromEntries(
  Object.entries(counts.durations ?? {}).map(([file, ms]) => [relative(process.cwd(), file), Math.round(ms)]),
);
try {
  mkdirSync(dirname(durationsFile), { recursive: true });
  writeFileSync(
    durationsFile,
    `${JSON.stringify({ ...readDurations(durationsFile), ...measured }, null, 1)}\n`,
  );
} catch {
  // only the order of the next run depends on it
}
// Where the time went: the slowest files of this run, for CI logs.
const slowest = Object.entries(measured)
  .sort(([, a], [, b]) => b - a)
  .slice(0, 15);
if (slowest.length > 0) {
  console.log(`# the ${slowest.length} slowest files (wall time of each file's process):`);
  for (const [file, ms] of slowest) console.log(`#   ${(ms / 1000).toFixed(1).padStart(6)} s  ${file}`);
}
const todo = counts.todo > 0 ? `, ${counts.todo} todo` : '';
const cleanNote = left.length > 0 ? ', not cleaned up' : '';
console.log(`${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped${todo}${cleanNote}`);
process.exit(left.length > 0 ? 1 : (result.status ?? 1));
