import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { randomBase62 } from '../../src/lib/crypto.js';
import { builtCli } from '../helpers/cli.js';

const CLI = builtCli;

/** `openvat serve` with `env` added; its exit code and stderr once it exits (it must, at once). */
function serve(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI, 'serve'], {
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'warn',
        OPENVAT_TEDB_URL: 'off',
        ...env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    // A service that starts instead of refusing is stopped, and the test fails on its exit code.
    const started = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(started);
      resolve({ code, stderr });
    });
  });
}

// A metrics token or an admin key that can be guessed is refused at start, in one line naming the
// setting, and so is a connection URL with the placeholder password of an example file.
describe('openvat serve refuses guessable secrets', { concurrency: 3 }, () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-secrets-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const started: Array<[string, Record<string, string>, RegExp]> = [
    [
      'OPENVAT_METRICS_TOKEN=a',
      { OPENVAT_METRICS_TOKEN: 'a' },
      /^openvat: OPENVAT_METRICS_TOKEN is too short \(1 character; at least 32 are needed\); make one with `openssl rand -hex 32`$/,
    ],
    [
      'an admin key of one letter',
      { OPENVAT_ADMIN_KEY: `svc_admin_${'F'.repeat(32)}` },
      /^openvat: OPENVAT_ADMIN_KEY: the 32 letters and digits after svc_admin_ are too easy to guess \(about 0 bits of randomness, at least 64 are needed/,
    ],
    [
      'the password of an example file in DATABASE_URL',
      { DATABASE_URL: 'postgres://openvat:change-me-postgres@127.0.0.1:9/openvat' },
      /^openvat: DATABASE_URL: its password is the placeholder of an example file \(change-me-postgres\); set a password of its own$/,
    ],
  ];
  for (const [what, env, message] of started) {
    it(`${what}: exit 2 and one line`, async () => {
      const databaseUrl = `sqlite:${join(dir, `${randomBytes(4).toString('hex')}.sqlite`)}`;
      // Refused before any database is asked (the address in DATABASE_URL above answers nothing).
      const result = await serve({ DATABASE_URL: databaseUrl, ...env });
      assert.equal(result.code, 2, result.stderr);
      const lines = result.stderr.split('\n').filter((line) => line !== '');
      assert.equal(lines.length, 1, result.stderr);
      assert.match(lines[0] as string, message);
    });
  }

  it('placeholders, repeats and runs are refused by the same check', () => {
    const refused: Array<[Record<string, string>, RegExp]> = [
      [{ OPENVAT_METRICS_TOKEN: 'CHANGE-ME' }, /^OPENVAT_METRICS_TOKEN is too short \(9 characters/],
      [
        { OPENVAT_METRICS_TOKEN: 'x'.repeat(48) },
        /^OPENVAT_METRICS_TOKEN is too easy to guess \(about 0 bits/,
      ],
      [{ OPENVAT_METRICS_TOKEN: 'prometheus'.repeat(4) }, /^OPENVAT_METRICS_TOKEN is too easy to guess/],
      [
        { OPENVAT_ADMIN_KEY: 'svc_admin_abcdefghijklmnopqrstuvwxyzABCDEF' },
        /^OPENVAT_ADMIN_KEY: .* too easy to guess/,
      ],
      [
        { OPENVAT_ADMIN_KEY: 'svc_admin_01234567890123456789012345678901' },
        /^OPENVAT_ADMIN_KEY: .* too easy to guess/,
      ],
      [
        { OPENVAT_ADMIN_KEY: 'svc_admin_Password1Password1Password1Passw' },
        /^OPENVAT_ADMIN_KEY: .* too easy to guess/,
      ],
    ];
    for (const [env, message] of refused) {
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => error instanceof ConfigError && message.test(error.message),
        JSON.stringify(env),
      );
    }
  });

  it("the Kubernetes example secret's URLs are refused as they are shipped", () => {
    const example = readFileSync('deploy/kubernetes/secret.example.yaml', 'utf8');
    for (const name of ['DATABASE_URL', 'REDIS_URL']) {
      const value = new RegExp(`^  ${name}: (\\S+)$`, 'm').exec(example)?.[1];
      assert.ok(value, name);
      assert.throws(
        () => loadConfig({ [name]: value }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message.startsWith(`${name}: its password is the placeholder`),
        name,
      );
    }
  });

  it("the instances refuse compose.yaml's URLs with deploy/compose.env.example's values as they are shipped", () => {
    const example = readFileSync('deploy/compose.env.example', 'utf8');
    const values = new Map(
      [...example.matchAll(/^([A-Z_0-9]+)=(.*)$/gm)].map((m) => [m[1] as string, m[2] as string]),
    );
    assert.equal(values.get('POSTGRES_PASSWORD'), '', 'no usable password is shipped');
    assert.equal(values.get('REDIS_PASSWORD'), '');
    const compose = readFileSync('compose.yaml', 'utf8');
    // As podman-compose 1.0 substitutes them: an empty value is used (docker compose refuses it).
    const substituted = (name: string) => {
      const line = new RegExp(`^ {4}${name}: (.+)$`, 'm').exec(compose)?.[1];
      assert.ok(line, name);
      return line.replace(
        /\$\{([A-Z_0-9]+)(?::[-?][^}]*)?\}/g,
        (_, variable: string) => values.get(variable) ?? '',
      );
    };
    for (const name of ['DATABASE_URL', 'REDIS_URL']) {
      assert.throws(
        () => loadConfig({ [name]: substituted(name) }),
        (error: unknown) =>
          error instanceof ConfigError && error.message.startsWith(`${name}: its password is empty`),
        substituted(name),
      );
    }
  });

  it('random secrets of the documented kinds are taken', () => {
    for (let i = 0; i < 200; i++) {
      const config = loadConfig({
        OPENVAT_METRICS_TOKEN: randomBytes(i % 2 === 0 ? 16 : 32).toString('hex'),
        OPENVAT_ADMIN_KEY: `svc_admin_${randomBase62(32)}`,
      });
      assert.ok(config.metricsToken && config.admin.key);
    }
    assert.ok(loadConfig({ OPENVAT_METRICS_TOKEN: randomBytes(24).toString('base64url') }).metricsToken);
  });
});
