import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { databaseTargets } from '../helpers/db.js';
import { redisSkip } from '../helpers/redis.js';

/** Whether something accepts connections on 127.0.0.1:port. */
function listens(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(1_000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('connect', () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/** scripts/run-tests.mjs on a fixture folder, with the given environment on top of a clean one. */
function runFixtures(dir: string, env: Record<string, string> = {}) {
  // NODE_TEST_CONTEXT would make the nested `node --test` report to this process instead of running.
  const {
    TEST_DATABASE_URL: _db,
    TEST_REDIS_URL: _redis,
    CI: _ci,
    NODE_TEST_CONTEXT: _context,
    ...base
  } = process.env;
  const result = spawnSync(
    process.execPath,
    ['scripts/run-tests.mjs', '--dir', `test/fixtures/runner/${dir}`],
    {
      env: { ...base, ...env },
      encoding: 'utf8',
      // A run that hangs fails here instead of holding up the suite.
      timeout: 60_000,
    },
  );
  const lines = result.stdout.trimEnd().split('\n');
  const run = /^# run ([0-9a-f]+):/m.exec(result.stdout)?.[1];
  return { status: result.status, stdout: result.stdout, last: lines.at(-1), run };
}

/** The schemas, databases and Redis keys of run `run` that exist now. */
async function remaining(run: string) {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  const pattern = `t\\_${run}\\_%`;
  const databases = await client.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [pattern]);
  const schemas = await client.query('SELECT nspname FROM pg_namespace WHERE nspname LIKE $1', [pattern]);
  await client.end();
  const redis = new Redis(process.env.TEST_REDIS_URL as string);
  const keys = await redis.keys(`openvat-test:${run}:*`);
  redis.disconnect();
  return { databases: databases.rowCount, schemas: schemas.rowCount, keys: keys.length };
}

describe('the test runner counts what ran', () => {
  it('ends with passed, failed and skipped, counting every test of a skipped suite, and fails the run on a failure', () => {
    const run = runFixtures('mixed');
    assert.equal(run.last, '3 passed, 4 failed, 7 skipped, 1 todo', run.stdout);
    assert.equal(run.status, 1);
    // The tests of skipped suites are listed by name with the suite's reason, and none of them ran.
    assert.match(run.stdout, /﹣ three .*# the service is absent/);
    assert.match(run.stdout, /﹣ four .*# the service is absent/);
    assert.doesNotMatch(run.stdout, /a skipped test never runs|a skipped suite runs no hook/);
  });

  it('times every file by its own process, top-level suites included, and names the slowest before the counts', () => {
    const run = runFixtures('mixed', { OPENVAT_TEST_CONCURRENCY: '1' });
    assert.match(run.stdout, /^# 1 test files at a time/m);
    const listed = /^# the (\d+) slowest files[^\n]*\n((?:#\s+\d+\.\d s {2}\S+\n)+)/m.exec(run.stdout);
    assert.ok(listed, run.stdout);
    // counts.test.ts declares only suites (reported with skipped-suites.mjs as their file).
    const files = (listed[2] ?? '')
      .trimEnd()
      .split('\n')
      .map((line) => line.split(/\s+/).at(-1));
    assert.deepEqual(files.sort(), [
      'test/fixtures/runner/mixed/counts.test.ts',
      'test/fixtures/runner/mixed/load-error.test.ts',
    ]);
    assert.equal(listed[1], '2');
    assert.equal(run.last, '3 passed, 4 failed, 7 skipped, 1 todo');
  });

  it('suites of the database and Redis helpers are counted as skipped tests when the services are off', () => {
    const run = runFixtures('services', { TEST_DATABASE_URL: 'off', TEST_REDIS_URL: 'off' });
    assert.equal(run.last, '2 passed, 0 failed, 5 skipped', run.stdout);
    assert.equal(run.status, 0);
    assert.match(run.stdout, /# PostgreSQL: off \(TEST_DATABASE_URL=off\)/);
    assert.match(run.stdout, /﹣ one .*# TEST_DATABASE_URL=off/);
    assert.match(run.stdout, /﹣ three .*# TEST_REDIS_URL=off/);
  });

  it('without TEST_DATABASE_URL and TEST_REDIS_URL it uses the servers on their standard local ports, and says so', async () => {
    const run = runFixtures('services');
    const postgres = await listens(5432);
    const redis = await listens(6379);
    if (postgres) {
      assert.match(
        run.stdout,
        /# PostgreSQL: postgres:\/\/postgres@127\.0\.0\.1:5432\/test \(found on 127\.0\.0\.1:5432/,
      );
      assert.match(run.stdout, /✔ one/);
    } else assert.match(run.stdout, /# PostgreSQL: none on 127\.0\.0\.1:5432 and TEST_DATABASE_URL unset/);
    if (redis) {
      assert.match(run.stdout, /# Redis: redis:\/\/127\.0\.0\.1:6379 \(found on 127\.0\.0\.1:6379/);
      assert.match(run.stdout, /✔ three/);
    } else assert.match(run.stdout, /# Redis: none on 127\.0\.0\.1:6379 and TEST_REDIS_URL unset/);
    // On CI both servers run: there the whole suite must have been found, never skipped.
    if (process.env.CI === 'true') assert.equal(run.last, '7 passed, 0 failed, 0 skipped', run.stdout);
  });

  it('a test file that leaves a server open still ends: its failure is reported, the run does not hang', () => {
    const run = runFixtures('open-handle');
    assert.equal(run.status, 1, run.stdout);
    assert.equal(run.last, '1 passed, 2 failed, 0 skipped', run.stdout);
  });

  it('with CI=true an absent PostgreSQL or Redis fails the run instead', () => {
    const run = runFixtures('services', { CI: 'true', TEST_DATABASE_URL: 'off', TEST_REDIS_URL: 'off' });
    assert.equal(run.last, '0 passed, 1 failed, 0 skipped', run.stdout);
    assert.equal(run.status, 1);
    assert.match(run.stdout, /CI=true requires PostgreSQL/);
  });
});

const servicesSkip =
  (await databaseTargets()).find((t) => t.name === 'postgres')?.skip || (await redisSkip());

describe('the test runner leaves nothing on PostgreSQL and Redis', { skip: servicesSkip }, () => {
  const services = {
    TEST_DATABASE_URL: process.env.TEST_DATABASE_URL ?? '',
    TEST_REDIS_URL: process.env.TEST_REDIS_URL ?? '',
  };

  it("a failing test's database and Redis keys are dropped as its process exits, and the run stays clean", async () => {
    const run = runFixtures('leftovers', services);
    assert.equal(run.last, '0 passed, 1 failed, 0 skipped', run.stdout);
    assert.equal(run.status, 1);
    assert.doesNotMatch(run.stdout, /left behind by the tests/);
    assert.ok(run.run, run.stdout);
    assert.deepEqual(await remaining(run.run), { databases: 0, schemas: 0, keys: 0 });
  });

  it('what a killed test process left is dropped at the end of the run, named, and fails the run', async () => {
    const run = runFixtures('killed', services);
    assert.equal(run.status, 1, run.stdout);
    assert.match(
      run.stdout,
      /# left behind by the tests \(dropped now\): 1 PostgreSQL database\(s\): t_[0-9a-f]+_\d+_db_/,
    );
    assert.match(run.stdout, /# left behind by the tests \(dropped now\): 1 Redis key\(s\)/);
    assert.match(run.last ?? '', /, not cleaned up$/);
    assert.ok(run.run, run.stdout);
    assert.deepEqual(await remaining(run.run), { databases: 0, schemas: 0, keys: 0 });
  });
});
