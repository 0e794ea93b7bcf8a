import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';

const exec = promisify(execFile);

describe('npx openvat in a checkout', () => {
  // A cache of its own: npx installs the checkout into it (as a link) on the first call only.
  const cache = mkdtempSync(join(tmpdir(), 'openvat-npx-'));
  after(() => rmSync(cache, { recursive: true, force: true }));

  it('runs the built CLI without rebuilding dist/ under a service that may be running from it', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const built = statSync('dist/cli/index.js').mtimeMs;
    const { stdout } = await exec('npx', ['--yes', 'openvat', '--version'], {
      env: { ...process.env, npm_config_cache: cache, npm_config_update_notifier: 'false' },
      timeout: 120_000,
    });
    assert.equal(stdout.trim(), version);
    assert.equal(statSync('dist/cli/index.js').mtimeMs, built, 'dist/ was not rebuilt');
  });
});
