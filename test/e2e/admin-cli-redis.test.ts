import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { adminCli as cli, adminCliJson as json } from '../helpers/admin-cli.js';
import { startServerProcess } from '../helpers/processes.js';
import { redisSkip } from '../helpers/redis.js';
import { redisPrefix } from '../helpers/resources.js';

const skip = await redisSkip();

/**
 * A change made by the CLI on the database reaches a running instance through Redis at once: the
 * instance caches keys for a minute here, so only Redis's message can make it refuse a key the CLI
 * revoked, or an account the CLI disabled, on its next request.
 */
describe('openvat keys and accounts on DATABASE_URL with REDIS_URL: running instances are told at once', {
  skip,
}, () => {
  let dir: string;
  let env: Record<string, string>;
  let url: string;
  let stop: () => void;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-admin-redis-'));
    env = {
      DATABASE_URL: `sqlite:${join(dir, 'openvat.db')}`,
      REDIS_URL: process.env.TEST_REDIS_URL as string,
      OPENVAT_REDIS_PREFIX: redisPrefix('admincli'),
      OPENVAT_KEY_CACHE_MS: '60000',
    };
    const migrated = await cli(['migrate'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    const server = await startServerProcess(env);
    url = server.url;
    stop = () => server.child.kill('SIGKILL');
  });
  after(() => {
    stop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The status of a test-mode validation with `key` at the running instance. */
  async function validate(key: string): Promise<number> {
    const res = await fetch(`${url}/v1/validate?vat_number=DE100000008`, {
      headers: { authorization: `Bearer ${key}` },
    });
    await res.arrayBuffer();
    return res.status;
  }

  it('a key revoked and an account disabled by the CLI are refused on the next request', async () => {
    const revoked = await json<{ id: string; key: string }>(['keys', 'create', '--plan', 'pro'], env);
    assert.equal(await validate(revoked.key), 200, 'the instance has the key cached');
    const revoking = await cli(['keys', 'revoke', revoked.id], env);
    assert.equal(revoking.code, 0, revoking.stderr);
    assert.equal(revoking.stderr, '', 'Redis answered: no warning');
    assert.equal(await validate(revoked.key), 401);

    const other = await json<{ id: string; key: string; account_id: string }>(
      ['keys', 'create', '--plan', 'pro'],
      env,
    );
    assert.equal(await validate(other.key), 200);
    const disabling = await cli(['accounts', 'disable', other.account_id], env);
    assert.equal(disabling.code, 0, disabling.stderr);
    assert.equal(await validate(other.key), 401);
  });
});
