import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { buildTestApp, type TestApp } from '../helpers/app.js';

const exec = promisify(execFile);

// The README's way to use the CLI on another machine, the package not being on the registry: pack it
// in a checkout, copy the tarball, `npx ./openvat-VERSION.tgz …` there. Packed from dist/ as built
// (`npm run build` first).
describe('the packed package, run with npx outside the checkout', () => {
  const dir = mkdtempSync(join(tmpdir(), 'openvat-packed-'));
  const elsewhere = join(dir, 'elsewhere');
  let t: TestApp;
  let url: string;
  let adminKey: string;
  let tarball: string;

  before(async () => {
    mkdirSync(elsewhere);
    const packed = await exec(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', elsewhere],
      {
        timeout: 120_000,
      },
    );
    tarball = (JSON.parse(packed.stdout) as { filename: string }[])[0]?.filename ?? '';
    t = await buildTestApp();
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
    adminKey = (await t.container.admin.createKey('packed-cli', 'admin')).key;
  });
  after(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** `npx ./TARBALL ARGS…` in a directory outside the checkout, with an npm cache of its own. */
  const npx = (args: string[]) =>
    exec('npx', ['--yes', `./${tarball}`, ...args], {
      cwd: elsewhere,
      env: {
        ...process.env,
        npm_config_cache: join(dir, 'npm-cache'),
        npm_config_update_notifier: 'false',
        npm_config_audit: 'false',
        npm_config_fund: 'false',
        // No install scripts: better-sqlite3 would compile SQLite (minutes here), and a command that
        // works through the admin API (`--url`) never opens a database.
        npm_config_ignore_scripts: 'true',
      },
      timeout: 300_000,
    });

  it('prints its version and creates a key through the admin API of a running service', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    assert.equal(tarball, `openvat-${version}.tgz`);
    // What the README tells a user to run on another machine is what runs here.
    const readme = readFileSync('README.md', 'utf8');
    assert.match(readme, /^npm pack +# in a checkout/m);
    assert.ok(readme.includes(`npx ./${tarball} keys create `), 'the README names this tarball');
    assert.equal((await npx(['--version'])).stdout.trim(), version);
    const created = await npx([
      'keys',
      'create',
      '--plan',
      'pro',
      '--mode',
      'live',
      '--scopes',
      'validate',
      '--url',
      url,
      '--admin-key',
      adminKey,
      '--json',
    ]);
    const key = JSON.parse(created.stdout) as { key: string; plan: string; mode: string };
    assert.equal(key.plan, 'pro');
    assert.match(key.key, /^svc_live_/);
    const found = await t.container.keys.authenticate(key.key);
    assert.equal(found.kind === 'ok' && found.principal.plan, 'pro', 'the key works');
  });
});
