import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../helpers/processes.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** Whether something answers `/health` at `url` (false when nothing listens). */
async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

describe("the README's npm start", () => {
  it('stops the service when npm itself is sent SIGTERM, as a process manager sends it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openvat-npm-start-'));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const npm = spawn('npm', ['start'], {
      cwd: ROOT,
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: String(port),
        DATABASE_URL: `sqlite:${join(dir, 'openvat.sqlite')}`,
        LOG_LEVEL: 'warn',
        OPENVAT_TEDB_URL: 'off',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((done) => npm.once('exit', (code) => done(code)));
    try {
      const deadline = Date.now() + 60_000;
      while (!(await answers(url))) {
        assert.ok(Date.now() < deadline, 'the service answered /health');
        await sleep(100);
      }
      npm.kill('SIGTERM');
      await exited;
      const stopped = Date.now() + 10_000;
      while (await answers(url)) {
        assert.ok(Date.now() < stopped, 'the service is still answering after npm was stopped');
        await sleep(100);
      }
    } finally {
      npm.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
