/**
 * Names for what a test makes on the shared PostgreSQL and Redis servers, and their clean-up.
 *
 * Every name carries the run's id (OPENVAT_TEST_RUN, from scripts/run-tests.mjs) and this process's
 * pid (scripts/test-runner/resources.mjs). The first name made registers a clean-up for the moment
 * this process exits: whatever is left of its schemas, databases and Redis keys is dropped then,
 * also when a test failed before its own `after` could. The runner drops and reports anything left
 * even so (a process killed outright), and fails the run for it.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

/** The run this process belongs to; `local` when a test file is run without scripts/run-tests.mjs. */
export const testRun = /^[a-z0-9]+$/.test(process.env.OPENVAT_TEST_RUN ?? '')
  ? (process.env.OPENVAT_TEST_RUN as string)
  : 'local';

const cleanup = fileURLToPath(new URL('../../scripts/test-runner/cleanup.mjs', import.meta.url));
let registered = false;

/** Drops this process's leftovers as it exits (once, whatever made the first name). */
function cleanUpOnExit(): void {
  if (registered) return;
  registered = true;
  process.once('exit', () => {
    // `exit` handlers run synchronously: the clean-up is a short child process waited for here.
    spawnSync(process.execPath, [cleanup, testRun, String(process.pid)], {
      env: process.env,
      stdio: ['ignore', 'inherit', 'inherit'],
      timeout: 30_000,
    });
  });
}

function label(name: string): string {
  if (!/^[a-z][a-z0-9]*$/.test(name))
    throw new Error(`a resource label is lower-case letters and digits: "${name}"`);
  return name;
}

/** A fresh Redis key prefix, `openvat-test:<run>:<pid>:<name>:<random>:`. */
export function redisPrefix(name: string): string {
  cleanUpOnExit();
  return `openvat-test:${testRun}:${process.pid}:${label(name)}:${randomBytes(4).toString('hex')}:`;
}

/** A fresh PostgreSQL schema or database name, `t_<run>_<pid>_<name>_<random>` (a plain identifier). */
export function postgresName(name: string): string {
  cleanUpOnExit();
  return `t_${testRun}_${process.pid}_${label(name)}_${randomBytes(4).toString('hex')}`;
}

/** The run's template database (see test/helpers/db.ts). */
export function templateDatabaseName(): string {
  return `t_${testRun}_template`;
}
