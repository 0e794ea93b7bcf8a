import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { builtCli } from '../helpers/cli.js';

// Absolute, so that a command can run in another directory (the default DATABASE_URL is relative).
const CLI = builtCli;

/** `openvat serve` with `env` added; resolves with its exit code and stderr once it exits (it must). */
function serve(
  env: Record<string, string>,
  as: { uid: number; gid: number } | null = null,
): Promise<{ code: number | null; stderr: string }> {
  return openvat(['serve'], env, as);
}

/** `openvat ARGS…` with `env` added (`undefined` removes a variable), in `cwd`; its exit code and stderr. */
function openvat(
  args: string[],
  env: Record<string, string | undefined>,
  as: { uid: number; gid: number } | null = null,
  cwd = process.cwd(),
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI, ...args], {
      env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
      cwd,
      ...(as ?? {}),
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    // A service that starts instead of failing is stopped, and the test fails on its exit code.
    const started = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(started);
      resolve({ code, stderr });
    });
  });
}

/** One line on stderr, `openvat: ` and the message. */
function assertOneLine(result: { code: number | null; stderr: string }, code: number, message: RegExp) {
  assert.equal(result.code, code, result.stderr);
  const lines = result.stderr.split('\n').filter((line) => line !== '');
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0] as string, /^openvat: /);
  assert.match(lines[0] as string, message);
}

describe('openvat serve refuses bad settings at start with one line naming the setting', {
  concurrency: 3,
}, () => {
  let dir: string;
  let busy: Server;
  let busyPort: number;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-start-'));
    busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    busyPort = (busy.address() as { port: number }).port;
  });
  after(async () => {
    await new Promise<void>((r) => busy.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });
  const sqlite = () => `sqlite:${join(dir, 'openvat.sqlite')}`;

  for (const [name, env, message] of [
    [
      'trusting every address in OPENVAT_TRUST_PROXY',
      { OPENVAT_TRUST_PROXY: 'true' },
      /^openvat: OPENVAT_TRUST_PROXY must list the proxies' addresses or ranges .*got "true"/,
    ],
    [
      'a bad range in OPENVAT_TRUST_PROXY',
      { OPENVAT_TRUST_PROXY: '10.0.0.0/8,10.0.0.0/40' },
      /^openvat: OPENVAT_TRUST_PROXY: "10\.0\.0\.0\/40" is not an IP address, a CIDR range/,
    ],
    [
      'a pool size of 0',
      { OPENVAT_PG_POOL_SIZE: '0' },
      /^openvat: OPENVAT_PG_POOL_SIZE must be between 1 and 1000, got 0$/,
    ],
    [
      'a statement timeout in words',
      { OPENVAT_PG_STATEMENT_TIMEOUT_MS: '30s' },
      /^openvat: OPENVAT_PG_STATEMENT_TIMEOUT_MS must be a whole number, got "30s"$/,
    ],
  ] as const) {
    it(`${name}: exit 2`, async () => {
      assertOneLine(await serve({ DATABASE_URL: sqlite(), ...env }), 2, message);
    });
  }

  it('a mistyped SQLite directory: exit 2, and no directory or database is made', async () => {
    const mistyped = join(dir, 'dtaa', 'openvat.sqlite');
    const result = await serve({ DATABASE_URL: `sqlite:${mistyped}` });
    assertOneLine(
      result,
      2,
      /^openvat: DATABASE_URL: no directory .*\/dtaa for the SQLite file .*\/dtaa\/openvat\.sqlite; check DATABASE_URL \(a new database is made only in a directory that exists, at the default path, or by "openvat migrate"\)$/,
    );
    assert.equal(existsSync(join(dir, 'dtaa')), false);
    // Asked for explicitly, the same location is made.
    const migrated = await openvat(['migrate'], { DATABASE_URL: `sqlite:${mistyped}` });
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.ok(existsSync(mistyped));
  });

  it('the default DATABASE_URL makes ./data and the database in it', async () => {
    const cwd = join(dir, 'elsewhere');
    mkdirSync(cwd);
    // The start stops at the port in use, after the database was made.
    const result = await openvat(['serve'], { DATABASE_URL: undefined, PORT: String(busyPort) }, null, cwd);
    assertOneLine(result, 1, /^openvat: HOST, PORT: cannot listen on .*EADDRINUSE/);
    assert.ok(existsSync(join(cwd, 'data', 'openvat.sqlite')));
  });

  it('a SQLite directory that cannot be created: exit 2', async () => {
    writeFileSync(join(dir, 'a-file'), '');
    const result = await openvat(['migrate'], {
      DATABASE_URL: `sqlite:${join(dir, 'a-file', 'data', 'openvat.sqlite')}`,
    });
    assertOneLine(
      result,
      2,
      /^openvat: DATABASE_URL: the directory .*a-file\/data of the SQLite file cannot be created \(ENOTDIR\)$/,
    );
    const notDir = await serve({ DATABASE_URL: `sqlite:${join(dir, 'a-file', 'openvat.sqlite')}` });
    assertOneLine(
      notDir,
      2,
      /^openvat: DATABASE_URL: .*a-file, the SQLite file's directory, is not a directory$/,
    );
  });

  it('a SQLite directory this process cannot write: exit 2', async () => {
    const readOnly = join(dir, 'read-only');
    mkdirSync(readOnly);
    // root writes anywhere: the service is then run as nobody, for whom the directory is read-only.
    const root = process.getuid?.() === 0;
    if (root) chmodSync(dir, 0o755);
    else chmodSync(readOnly, 0o555);
    const result = await serve(
      { DATABASE_URL: `sqlite:${join(readOnly, 'openvat.sqlite')}` },
      root ? { uid: 65_534, gid: 65_534 } : null,
    );
    assertOneLine(
      result,
      2,
      /^openvat: DATABASE_URL: the SQLite directory .*read-only is not writable by this process \(EACCES\)$/,
    );
  });

  it('a DATABASE_URL that does not answer: exit 1', async () => {
    const result = await serve({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
    assertOneLine(
      result,
      1,
      /^openvat: DATABASE_URL: the database at postgres:\/\/127\.0\.0\.1:1\/none cannot be used: connect ECONNREFUSED/,
    );
  });

  it('sslmode=verify-full in DATABASE_URL against a PostgreSQL without TLS: exit 1', async (t) => {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) return t.skip('TEST_DATABASE_URL is not set');
    const tls = new URL(url);
    tls.searchParams.set('sslmode', 'verify-full');
    const result = await serve({ DATABASE_URL: tls.toString() });
    assertOneLine(
      result,
      1,
      /^openvat: DATABASE_URL: the database at .* cannot be used: The server does not support SSL connections$/,
    );
  });

  it('a REDIS_URL that does not answer: exit 2', async () => {
    const result = await serve({ DATABASE_URL: sqlite(), REDIS_URL: 'redis://127.0.0.1:1' });
    assertOneLine(
      result,
      2,
      /^openvat: REDIS_URL redis:\/\/127\.0\.0\.1:1 does not answer \(.*\); start Redis or unset REDIS_URL/,
    );
  });

  it('a port in use: exit 1, naming HOST and PORT', async () => {
    const result = await serve({ DATABASE_URL: sqlite(), PORT: String(busyPort) });
    assertOneLine(
      result,
      1,
      new RegExp(`^openvat: HOST, PORT: cannot listen on 127\\.0\\.0\\.1:${busyPort} \\(EADDRINUSE\\)$`),
    );
  });
});
