/** The CLI as an evidence test runs it: a real process, without the caller's time-stamping settings. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { builtCli } from './cli.js';

const CLI = builtCli;

/** `openvat <args>` with `env` added (and no `OPENVAT_TSA_*` of the caller's). */
export function cli(args: string[], env: Record<string, string>) {
  const { OPENVAT_TSA_ROOTS: _, OPENVAT_TSA_URLS: __, ...inherited } = process.env;
  return spawnSync(process.execPath, [...CLI, ...args], {
    env: { ...inherited, LOG_LEVEL: 'silent', ...env },
    encoding: 'utf8',
    // A service that starts instead of refusing its settings is stopped; the test fails on it.
    timeout: 60_000,
    killSignal: 'SIGKILL',
  });
}

/** One line on stderr, `openvat: ` and the message, and exit status 2. */
export function assertOneLine(result: ReturnType<typeof cli>, message: RegExp) {
  assert.equal(result.status, 2, result.stderr + result.stdout);
  const lines = result.stderr.split('\n').filter((line) => line !== '');
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0] as string, /^openvat: /);
  assert.match(lines[0] as string, message);
}
