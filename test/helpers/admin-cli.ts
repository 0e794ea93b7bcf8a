import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { builtCli } from './cli.js';
import { startServerProcess } from './processes.js';

const exec = promisify(execFile);

/** The CLI with `env` added; the admin API's variables only when `env` names them. */
export async function adminCli(args: string[], env: Record<string, string> = {}) {
  const { OPENVAT_ADMIN_URL: _url, OPENVAT_ADMIN_KEY: _key, ...inherited } = process.env;
  try {
    const { stdout, stderr } = await exec(process.execPath, [...builtCli, ...args], {
      env: { ...inherited, LOG_LEVEL: 'silent', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** The CLI, which must succeed; its stdout as JSON. */
export async function adminCliJson<T = Record<string, unknown>>(
  args: string[],
  env: Record<string, string> = {},
) {
  const res = await adminCli([...args, '--json'], env);
  assert.equal(res.code, 0, `${args.join(' ')}: ${res.stderr}`);
  return JSON.parse(res.stdout) as T;
}

/**
 * A service process on a migrated SQLite database of its own (in `dir`), with `adminKey` as its admin
 * key; `stop` kills it and removes the directory.
 */
export async function startAdminService(adminKey: string) {
  const dir = mkdtempSync(join(tmpdir(), 'openvat-admin-cli-'));
  const databaseUrl = `sqlite:${join(dir, 'openvat.db')}`;
  const migrated = await adminCli(['migrate'], { DATABASE_URL: databaseUrl });
  assert.equal(migrated.code, 0, migrated.stderr);
  const server = await startServerProcess({ DATABASE_URL: databaseUrl, OPENVAT_ADMIN_KEY: adminKey });
  function stop() {
    server.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
  return { dir, databaseUrl, url: server.url, stop };
}
