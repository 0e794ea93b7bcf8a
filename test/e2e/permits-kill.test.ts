import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import { createPermits, type RedisLike } from '../../src/registries/resilience.js';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { builtCli } from '../helpers/cli.js';
import { freePort } from '../helpers/processes.js';
import { redisSkip } from '../helpers/redis.js';
import { redisPrefix } from '../helpers/resources.js';

const ROOT = resolve(import.meta.dirname, '../..');
const skip = await redisSkip();

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A real server process holds both registry permits of a member state (its calls hang upstream) and
 * is killed with SIGKILL: it never releases them, and another instance gets them once their lease
 * runs out.
 */
describe('permits of a killed instance (real server process)', { skip, timeout: 120_000 }, () => {
  let dir: string;
  let sim: SimulatorServer;
  let redis: Redis;
  let child: ChildProcess | undefined;
  const prefix = redisPrefix('permitskill');

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-permits-'));
    sim = createSimulatorServer();
    await sim.listen(0, '127.0.0.1');
    redis = new Redis(process.env.TEST_REDIS_URL as string);
  });
  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    redis.disconnect();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('frees them within the lease', async () => {
    const address = sim.server.address() as AddressInfo;
    const base = `http://127.0.0.1:${address.port}`;
    const databaseUrl = `sqlite:${join(dir, 'openvat.sqlite')}`;
    const setup = await createContainer(loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }));
    const key = await setup.keys.createKey({ plan: 'pro', mode: 'live' });
    await setup.close();

    sim.control({ vies: { hang: ['DE'] } });
    const port = await freePort();
    child = spawn(process.execPath, [...builtCli, 'serve'], {
      cwd: ROOT,
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: String(port),
        DATABASE_URL: databaseUrl,
        LOG_LEVEL: 'warn',
        REDIS_URL: process.env.TEST_REDIS_URL as string,
        OPENVAT_REDIS_PREFIX: prefix,
        OPENVAT_PERMIT_LEASE_MS: '1500',
        OPENVAT_REGISTRY_CONCURRENCY: '2',
        OPENVAT_STATUS_POLL_MS: '0',
        VIES_URL: `${base}/vies/rest-api`,
        VIES_SOAP_URL: `${base}/vies/services/checkVatService`,
      },
      stdio: 'ignore',
    });
    const url = `http://127.0.0.1:${port}`;
    await until('the server to answer /health', () =>
      fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      ),
    );
    const headers = { authorization: `Bearer ${key.key}` };
    for (const vat of ['DE136695976', 'DE129273398']) {
      fetch(`${url}/v1/validate?vat_number=${vat}`, { headers }).catch(() => {});
    }
    const permits = `${prefix}permits:vies:DE`;
    await until('the server to hold both permits', async () => (await redis.zcard(permits)) === 2);

    const other = createPermits({
      limitFor: () => 2,
      shared: {
        redis: redis as unknown as RedisLike,
        prefix,
        leaseMs: 1_500,
        instances: () => 2,
        onDegraded: (error) => assert.fail(String(error)),
      },
    });
    let got = false;
    const waiting = other.acquire('vies:DE').then((permit) => {
      got = true;
      return permit;
    });
    await new Promise((r) => setTimeout(r, 2_000));
    assert.equal(got, false, 'a live holder keeps its permits past the lease by renewing them');

    const killed = new Promise<void>((r) => child?.once('exit', () => r()));
    child.kill('SIGKILL');
    await killed;
    assert.equal(await redis.zcard(permits), 2, 'the killed process released nothing');
    const permit = await waiting;
    assert.equal(got, true, 'freed by the lease');
    permit.release();
    other.close();
  });
});
