import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { builtCli } from '../helpers/cli.js';

const run = promisify(execFile);
const CLI = builtCli;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  await new Promise<void>((r) => server.close(() => r()));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

async function start(env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const child = spawn(process.execPath, [...CLI, 'serve'], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const url = `http://127.0.0.1:${port}`;
  // A loaded machine starts slowly: a bound that only stops a server that never answers.
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited: ${out}`);
    try {
      if ((await fetch(`${url}/health`)).ok) return { child, url, output: () => out, exited };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start: ${out}`);
}

/** A raw request with a very long header, which Node's parser refuses before Fastify sees it. */
function rawRequest(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = '';
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the openvat process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'openvat-e2e-'));
  const databaseUrl = `sqlite:${join(dir, 'openvat.sqlite')}`;
  let sim: SimulatorServer;
  let urls: Record<string, string>;

  before(async () => {
    sim = createSimulatorServer({ latencyMs: 1_500 });
    urls = { ...(await sim.listen(0, '127.0.0.1')).urls };
  });
  after(() => sim.close());

  it('first start creates the database, prints a Business test key once, and it works', async () => {
    const first = await start({ DATABASE_URL: databaseUrl });
    assert.ok(existsSync(join(dir, 'openvat.sqlite')));
    const key = /(svc_test_[0-9A-Za-z]{32})/.exec(first.output())?.[1];
    assert.ok(key, first.output());
    const res = await fetch(`${first.url}/v1/validate?vat_number=DE100000008`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(res.status, 200);
    assert.ok(res.headers.get('service-request-id'));
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);

    const second = await start({ DATABASE_URL: databaseUrl });
    assert.ok(!/svc_test_/.test(second.output()), 'the key is printed only on the first start');
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0);
  });

  it('with OPENVAT_ADMIN_PORT the admin plane answers on its own port only, and the public API not there', async () => {
    const adminPort = await freePort();
    const server = await start({
      DATABASE_URL: `sqlite:${join(dir, 'admin-port.sqlite')}`,
      OPENVAT_ADMIN_PORT: String(adminPort),
      OPENVAT_TEDB_URL: 'off',
    });
    try {
      const admin = `http://127.0.0.1:${adminPort}`;
      const adminKey = /(svc_admin_[0-9A-Za-z]{32})/.exec(server.output())?.[1];
      assert.ok(adminKey, server.output());
      assert.match(server.output(), new RegExp(`Admin console \\(sign in with it\\): ${admin}/admin/`));
      const auth = { authorization: `Bearer ${adminKey}` };
      assert.equal((await fetch(`${admin}/admin/v1/accounts`, { headers: auth })).status, 200);
      assert.equal((await fetch(`${admin}/admin/`)).status, 200, 'the console');
      assert.equal((await fetch(`${server.url}/admin/v1/accounts`, { headers: auth })).status, 404);
      assert.equal((await fetch(`${server.url}/admin/`)).status, 404);
      assert.equal((await fetch(`${server.url}/v1/rates/de`)).status, 200);
      assert.equal((await fetch(`${admin}/v1/rates/de`)).status, 404);
    } finally {
      server.child.kill('SIGTERM');
    }
    assert.equal(await server.exited, 0, server.output());
  });

  it('an offline first start warns that the rates sync failed and says when it is tried again', async () => {
    // TEDB at an address where nothing listens: what a machine without network access sees.
    const closed = await freePort();
    const server = await start({
      DATABASE_URL: `sqlite:${join(dir, 'offline.sqlite')}`,
      OPENVAT_TEDB_URL: `http://127.0.0.1:${closed}/tedb/ws/`,
    });
    try {
      const lines = () =>
        server
          .output()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { level: number; msg: string; next_run_at?: string });
      for (let i = 0; i < 600 && !lines().some((l) => l.msg.startsWith('rates sync')); i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const sync = lines().find((l) => l.msg.startsWith('rates sync'));
      assert.ok(sync, server.output());
      assert.equal(sync.level, 40, 'a warning, not an error');
      assert.match(sync.msg, /^rates sync changed nothing: .*; .* tried again at \d{4}-\d\d-\d\dT[\d:.]+Z$/);
      assert.match(sync.next_run_at ?? '', /^\d{4}-\d\d-\d\dT/);
      assert.ok(sync.msg.endsWith(sync.next_run_at ?? '-'), 'the time it names is next_run_at');
      assert.deepEqual(
        lines().filter((l) => l.level >= 50),
        [],
        'nothing is logged as an error',
      );
    } finally {
      server.child.kill('SIGTERM');
    }
    assert.equal(await server.exited, 0, server.output());
  });

  it('keys create/list/revoke through the CLI on the same DATABASE_URL', async () => {
    const env = { ...process.env, DATABASE_URL: databaseUrl };
    const created = await run(
      process.execPath,
      [...CLI, 'keys', 'create', '--plan', 'pro', '--mode', 'live', '--json'],
      { env },
    );
    const key = JSON.parse(created.stdout) as { id: string; key: string; plan: string; mode: string };
    assert.deepEqual(
      Object.keys(key)
        .filter((k) => ['id', 'key', 'plan', 'mode'].includes(k))
        .sort(),
      ['id', 'key', 'mode', 'plan'],
    );
    assert.match(key.key, /^svc_live_/);
    assert.equal(key.plan, 'pro');
    const listed = await run(process.execPath, [...CLI, 'keys', 'list'], { env });
    assert.match(listed.stdout, new RegExp(key.id));
    assert.ok(!listed.stdout.includes(key.key), 'list never shows the key');
    await run(process.execPath, [...CLI, 'keys', 'revoke', key.id], { env });
    const after = await run(process.execPath, [...CLI, 'keys', 'list'], { env });
    assert.match(after.stdout, /revoked/);
    await assert.rejects(
      run(process.execPath, [...CLI, 'keys', 'create', '--plan', 'gold', '--mode', 'live'], { env }),
      /gold/,
    );
    await assert.rejects(
      run(process.execPath, [...CLI, 'keys', 'create', '--plan', 'pro', '--default-requester-vat', 'FR123'], {
        env,
      }),
    );
  });

  it('answers oversized headers with a 431 error envelope', async () => {
    const server = await start({ DATABASE_URL: databaseUrl });
    try {
      const res = await rawRequest(`${server.url}/v1/rates/de`, { 'x-big': 'a'.repeat(20_000) });
      assert.equal(res.status, 431);
      const body = JSON.parse(res.body);
      assert.equal(body.error.code, 'invalid_format');
      assert.ok(body.meta.request_id);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('SIGTERM lets an in-flight request finish, then exits 0', async () => {
    const server = await start({
      DATABASE_URL: databaseUrl,
      VIES_URL: urls.VIES_URL as string,
      OPENVAT_STATUS_POLL_MS: '0',
    });
    const created = await run(
      process.execPath,
      [...CLI, 'keys', 'create', '--plan', 'pro', '--mode', 'live', '--json'],
      {
        env: { ...process.env, DATABASE_URL: databaseUrl },
      },
    );
    const { key } = JSON.parse(created.stdout) as { key: string };
    // The simulator takes 1.5 s to answer: the request is in flight when SIGTERM arrives.
    const inFlight = fetch(`${server.url}/v1/validate?vat_number=FR40303265045`, {
      headers: { authorization: `Bearer ${key}` },
    });
    await new Promise((r) => setTimeout(r, 400));
    server.child.kill('SIGTERM');
    const res = await inFlight;
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { meta: { source: string } }).meta.source, 'vies');
    assert.equal(await server.exited, 0, server.output());
    await assert.rejects(fetch(`${server.url}/health`), 'no longer listening');
  });
});
