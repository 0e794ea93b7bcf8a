import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestTsa, type TestTsa } from '../fakes/tsa.js';
import { builtCli } from '../helpers/cli.js';
import { startServerProcess } from '../helpers/processes.js';

const exec = promisify(execFile);
const HOOK = fileURLToPath(new URL('../helpers/module-log.mjs', import.meta.url));

/**
 * What each file of the built bundle holds (scripts/build.mjs writes it): the packages, and
 * openvat's own folders as `openvat:…`, bundled into it.
 */
const BUNDLE = fileURLToPath(new URL('../../dist/cli/', import.meta.url));
const bundled = JSON.parse(readFileSync(join(BUNDLE, 'chunks.json'), 'utf8')) as Record<string, string[]>;

/** The packages (and openvat's own folders) a module list names: loaded from node_modules or in a loaded file of the bundle. */
function packagesIn(list: string): Set<string> {
  const names = new Set<string>();
  for (const url of list.split('\n')) {
    const inPackage = url.match(/\/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
    if (inPackage?.[1]) names.add(inPackage[1]);
    if (!url.startsWith('file:') || !fileURLToPath(url).startsWith(BUNDLE)) continue;
    const file = fileURLToPath(url).slice(BUNDLE.length);
    const held = bundled[file];
    assert.ok(held, `${file} is not in dist/cli/chunks.json`);
    for (const name of held) names.add(name);
  }
  return names;
}

/** Packages only some commands need: none is loaded by a command that does not use it. */
const HEAVY = ['pdfkit', 'pkijs', 'ioredis', 'prom-client', 'csv-parse', 'cli-progress', 'fast-xml-parser'];

describe('a command loads what it uses only (the modules a run loads, listed by a loader hook)', () => {
  let dir: string;
  let env: Record<string, string>;
  let n = 0;
  /** The packages a run of the CLI with `args` loaded. */
  async function loadedBy(args: string[]): Promise<Set<string>> {
    const log = join(dir, `modules-${n++}.txt`);
    await exec(process.execPath, [...builtCli, ...args], {
      env: { ...process.env, ...env, NODE_OPTIONS: `--import ${HOOK}`, OPENVAT_MODULE_LOG: log },
    });
    return packagesIn(readFileSync(log, 'utf8'));
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-modules-'));
    env = { DATABASE_URL: `sqlite:${join(dir, 'modules.db')}`, LOG_LEVEL: 'silent', OPENVAT_TEDB_URL: 'off' };
    await exec(process.execPath, [...builtCli, 'migrate'], { env: { ...process.env, ...env } });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the hook sees what a run loads (a list that names nothing would pass every check below)', async () => {
    // Fastify as well: the idle service's run below.
    const loaded = await loadedBy(['keys', 'list']);
    for (const used of ['commander', 'kysely', 'better-sqlite3', 'openvat:modules/keys'])
      assert.ok(loaded.has(used), `${used} not listed: ${[...loaded].join(' ')}`);
  });

  it('--version loads no database, HTTP framework or command module', async () => {
    const loaded = await loadedBy(['--version']);
    assert.ok(loaded.has('commander'));
    for (const unused of [
      ...HEAVY,
      'kysely',
      'better-sqlite3',
      'fastify',
      '@sinclair/typebox',
      'csv-stringify',
    ])
      assert.ok(!loaded.has(unused), `--version loaded ${unused}`);
  });

  it('keys and accounts work on the database through the service functions: no HTTP framework or logger is loaded', async () => {
    for (const args of [
      ['keys', 'list'],
      ['accounts', 'list'],
      ['keys', 'create', '--plan', 'pro', '--name', 'modules'],
      ['accounts', 'create', '--name', 'modules'],
    ]) {
      const loaded = await loadedBy(args);
      for (const used of ['kysely', 'better-sqlite3', 'openvat:modules/keys'])
        assert.ok(loaded.has(used), `${args.join(' ')} did not load ${used}`);
      for (const heavy of [
        ...HEAVY,
        '@scalar/fastify-api-reference',
        '@fastify/swagger',
        'fastify',
        'ajv',
        'pino',
      ])
        assert.ok(!loaded.has(heavy), `${args.join(' ')} loaded ${heavy}`);
    }
  });

  it('an idle service has loaded neither Scalar nor pdfkit; the reference page loads Scalar when asked for', async () => {
    const log = join(dir, 'modules-serve.txt');
    const { url, child } = await startServerProcess({
      ...env,
      LOG_LEVEL: 'warn',
      NODE_OPTIONS: `--import ${HOOK}`,
      OPENVAT_MODULE_LOG: log,
    });
    try {
      const idle = packagesIn(readFileSync(log, 'utf8'));
      assert.ok(idle.has('fastify'), [...idle].join(' '));
      for (const later of ['pdfkit', '@scalar/fastify-api-reference', '@scalar/client-side-rendering'])
        assert.ok(!idle.has(later), `an idle service loaded ${later}`);
      const page = await fetch(`${url}/docs/`);
      assert.equal(page.status, 200);
      await page.text();
      assert.ok(packagesIn(readFileSync(log, 'utf8')).has('@scalar/client-side-rendering'));
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });
});

describe("Node's module compile cache (Node 22.1 and later), under the OS temp directory", () => {
  const hasCache = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';
  let dir: string;
  let env: Record<string, string>;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-compile-cache-'));
    env = { DATABASE_URL: `sqlite:${join(dir, 'cache.db')}`, LOG_LEVEL: 'silent' };
    await exec(process.execPath, [...builtCli, 'migrate'], { env: { ...process.env, ...env } });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** `openvat keys list` with TMPDIR (the OS temp directory) at `temp`, Node's own cache settings unset. */
  function keysList(temp: string) {
    const { NODE_COMPILE_CACHE: _, NODE_DISABLE_COMPILE_CACHE: __, ...rest } = process.env;
    return exec(process.execPath, [...builtCli, 'keys', 'list'], { env: { ...rest, ...env, TMPDIR: temp } });
  }

  it('a command fills the cache, and the next run answers the same from it', {
    skip: !hasCache,
  }, async () => {
    const temp = join(dir, 'temp');
    mkdirSync(temp);
    const first = await keysList(temp);
    assert.ok(
      readdirSync(join(temp, 'node-compile-cache'), { recursive: true }).length > 0,
      'nothing cached',
    );
    assert.deepEqual(await keysList(temp), first);
  });

  it('the service leaves the cache off (it costs an idle service more memory than it saves)', {
    skip: !hasCache,
  }, async () => {
    const temp = join(dir, 'serve-temp');
    mkdirSync(temp);
    const { child } = await startServerProcess({ ...env, TMPDIR: temp });
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    assert.deepEqual(readdirSync(temp), []);
  });

  it('a temp directory the cache cannot be made in leaves the cache off, and the command runs', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    const { stderr } = await keysList(file);
    assert.equal(stderr, '');
  });
});

/** A preload that logs every module a process loads, by `require` too (`module.registerHooks`, Node 22.15+). */
const REQUIRE_HOOK = `import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
registerHooks({
  load(url, context, nextLoad) {
    appendFileSync(process.env.OPENVAT_MODULE_LOG, url + '\\n');
    return nextLoad(url, context);
  },
});
`;

describe('PKI.js and asn1js are loaded when a certificate is first read (a hook that sees `require` too)', () => {
  const hasHooks = typeof (module as { registerHooks?: unknown }).registerHooks === 'function';
  let dir: string;
  let hook: string;
  let env: Record<string, string>;
  let tsa: TestTsa;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-pki-'));
    hook = join(dir, 'require-hook.mjs');
    writeFileSync(hook, REQUIRE_HOOK);
    env = { DATABASE_URL: `sqlite:${join(dir, 'pki.db')}`, LOG_LEVEL: 'silent', OPENVAT_TEDB_URL: 'off' };
    await exec(process.execPath, [...builtCli, 'migrate'], { env: { ...process.env, ...env } });
    tsa = await startTestTsa('ok');
  });
  after(async () => {
    await tsa.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an idle service has not loaded them; evidence verify with pinned roots has', {
    skip: !hasHooks,
  }, async () => {
    const idleLog = join(dir, 'idle.txt');
    const { child } = await startServerProcess({
      ...env,
      LOG_LEVEL: 'warn',
      NODE_OPTIONS: `--import ${hook}`,
      OPENVAT_MODULE_LOG: idleLog,
    });
    const idle = packagesIn(readFileSync(idleLog, 'utf8'));
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    assert.ok(idle.has('fastify') && idle.has('better-sqlite3'), [...idle].join(' '));
    for (const later of ['pkijs', 'asn1js']) assert.ok(!idle.has(later), `an idle service loaded ${later}`);

    const verifyLog = join(dir, 'verify.txt');
    await exec(process.execPath, [...builtCli, 'evidence', 'verify', '--tsa-roots', tsa.caFile], {
      env: { ...process.env, ...env, NODE_OPTIONS: `--import ${hook}`, OPENVAT_MODULE_LOG: verifyLog },
    }).catch(() => {});
    const verify = packagesIn(readFileSync(verifyLog, 'utf8'));
    for (const used of ['pkijs', 'asn1js'])
      assert.ok(verify.has(used), `evidence verify did not load ${used}`);
  });
});
