import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { builtCli } from '../helpers/cli.js';

const exec = promisify(execFile);
const CLI = builtCli;

async function cli(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await exec(process.execPath, [...CLI, ...args], {
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the CLI', () => {
  let dir: string;
  let env: Record<string, string>;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-cli-'));
    env = { DATABASE_URL: `sqlite:${join(dir, 'keys.db')}` };
    // Only serve and migrate create a database.
    const migrated = await cli(['migrate'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('an unknown command names the closest one and exits with 2, instead of reaching serve', async () => {
    const typo = await cli(['key', 'list'], env);
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /unknown command 'key'\. Did you mean 'keys'\?/);
    assert.doesNotMatch(typo.stderr, /serve/);
    const nonsense = await cli(['frobnicate'], env);
    assert.equal(nonsense.code, 2);
    assert.match(nonsense.stderr, /unknown command 'frobnicate'\. Run 'openvat --help'/);
    const sub = await cli(['keys', 'lst'], env);
    assert.equal(sub.code, 2);
    assert.match(sub.stderr, /Did you mean list\?/);
  });

  it('a mistyped option is one line with the closest option, not the usage of serve', async () => {
    for (const args of [['--versoin'], ['serve', '--versoin'], ['keys', 'list', '--jsno']]) {
      const res = await cli(args, env);
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
      assert.equal(res.stdout, '', args.join(' '));
      const suggestion = args.includes('--jsno') ? '--json' : '--version';
      assert.equal(
        res.stderr,
        `openvat: unknown option '${args.at(-1)}'. Did you mean ${suggestion}?\n`,
        args.join(' '),
      );
    }
  });

  it('exits with 2 whenever a command cannot run as asked: usage, configuration, a missing database', async () => {
    const option = await cli(['keys', 'list', '--frobnicate'], env);
    assert.equal(option.code, 2, option.stderr);
    assert.match(option.stderr, /unknown option '--frobnicate'/);
    const badUrl = await cli(['keys', 'list'], { DATABASE_URL: 'mysql://x' });
    assert.equal(badUrl.code, 2, badUrl.stderr);
    assert.match(badUrl.stderr, /^openvat: DATABASE_URL must start with sqlite: or postgres:\/\//);
    const missing = join(dir, 'missing.db');
    for (const args of [
      ['keys', 'list'],
      ['monitors', 'list', '--key', 'svc_test_x'],
    ]) {
      const res = await cli(args, { DATABASE_URL: `sqlite:${missing}` });
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, /^openvat: no database at .*missing\.db/);
    }
    assert.equal(existsSync(missing), false, 'a missing database is not created');
    const help = await cli(['keys', '--help'], env);
    assert.equal(help.code, 0);
  });

  it('LOG_LEVEL is checked at start like every other variable, naming the levels', async () => {
    const res = await cli(['keys', 'list'], { ...env, LOG_LEVEL: 'verbose' });
    assert.equal(res.code, 2, res.stderr);
    assert.equal(
      res.stderr,
      'openvat: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"\n',
    );
  });

  it('a switch that is neither on nor off names the words it takes', async () => {
    const res = await cli(['keys', 'list'], { ...env, OPENVAT_PLAYGROUND: 'maybe' });
    assert.equal(res.code, 2, res.stderr);
    assert.match(
      res.stderr,
      /OPENVAT_PLAYGROUND must be one of true, on, yes, 1 \(enabled\) or false, off, no, 0 \(disabled\), got "maybe"/,
    );
    for (const word of ['on', 'off', 'TRUE', 'no']) {
      const ok = await cli(['keys', 'list'], { ...env, OPENVAT_PLAYGROUND: word });
      assert.equal(ok.code, 0, `${word}: ${ok.stderr}`);
    }
  });

  it('--version prints the package version; --help says serve is the default', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const res = await cli([flag], env);
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.stdout.trim(), version);
    }
    const help = await cli(['--help'], env);
    assert.match(help.stdout, /without a command, `openvat` runs `serve`/);
  });

  it('a database that does not answer is named as such, not as a failed migration', async () => {
    const res = await cli(['keys', 'list'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' });
    assert.equal(res.code, 1);
    assert.match(
      res.stderr,
      /^openvat: DATABASE_URL: the database at postgres:\/\/127\.0\.0\.1:1\/none cannot be used: /,
    );
    assert.doesNotMatch(res.stderr, /Migration/);
  });

  it('--default-requester-vat is checked like any VAT number, check digit included', async () => {
    const wrong = await cli(
      ['keys', 'create', '--plan', 'pro', '--default-requester-vat', 'DE123456787'],
      env,
    );
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /check digit of DE123456787 is wrong/);
    const foreign = await cli(
      ['keys', 'create', '--plan', 'pro', '--default-requester-vat', 'ATU13585627'],
      env,
    );
    assert.notEqual(foreign.code, 0);
    assert.match(foreign.stderr, /ATU13585627 is not a German VAT number/);
    const listed = await cli(['keys', 'list', '--json'], env);
    assert.deepEqual(JSON.parse(listed.stdout), [], 'nothing was created');
  });

  it("--default-requester-vat takes the authority's test requester, as confirm does (docs/api.md)", async () => {
    const own = { DATABASE_URL: `sqlite:${join(dir, 'official.db')}` };
    assert.equal((await cli(['migrate'], own)).code, 0);
    // Its check digit is wrong on purpose.
    const official = await cli(
      ['keys', 'create', '--plan', 'pro', '--default-requester-vat', 'DE 123 456 789'],
      own,
    );
    assert.equal(official.code, 0, official.stderr);
    const [key] = JSON.parse((await cli(['keys', 'list', '--json'], own)).stdout);
    assert.equal(key.default_requester_vat, 'DE123456789');
  });

  it('keys create --json and keys list --json are both snake_case, the fields of the admin API', async () => {
    const created = await cli(
      ['keys', 'create', '--plan', 'pro', '--default-requester-vat', 'de 136 695 976', '--json'],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    const key = JSON.parse(created.stdout);
    for (const field of ['account_id', 'id', 'key', 'mode', 'plan'])
      assert.ok(field in key, `keys create --json has ${field}`);
    const listed = JSON.parse((await cli(['keys', 'list', '--json'], env)).stdout);
    assert.equal(listed.length, 1);
    const { key: secret, ...shown } = key;
    assert.deepEqual(listed[0], { ...shown, created_at: listed[0].created_at });
    assert.equal(listed[0].prefix, secret.slice(0, 13));
    assert.equal(listed[0].plan, 'pro');
    assert.equal(listed[0].mode, 'test');
    assert.equal(listed[0].default_requester_vat, 'DE136695976');
    assert.equal(listed[0].revoked_at, null);
    assert.equal(listed[0].status, 'active');
  });

  it('simulate prints every variable a user needs, HMRC credentials included', async () => {
    const child = spawn(process.execPath, [...CLI, 'simulate', '--port', '0'], {
      env: { ...process.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        out += chunk;
        if (out.includes('HMRC_CLIENT_SECRET')) resolve();
      });
      child.once('exit', () => reject(new Error(`simulate exited: ${out}`)));
    });
    child.kill('SIGTERM');
    for (const name of [
      'VIES_URL',
      'VIES_SOAP_URL',
      'HMRC_URL',
      'BFS_URL',
      'BRREG_URL',
      'EVATR_URL',
      'OPENVAT_TEDB_URL',
    ]) {
      assert.match(out, new RegExp(`export ${name}=http://127\\.0\\.0\\.1:\\d+/`));
    }
    assert.match(out, /export HMRC_CLIENT_ID=dev\n/);
    assert.match(out, /export HMRC_CLIENT_SECRET=dev\n/);
  });
});
