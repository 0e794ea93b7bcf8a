import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { createDatabase } from '../../src/db/database.js';
import { builtCli } from '../helpers/cli.js';
import { databaseTargets } from '../helpers/db.js';
import { freePort } from '../helpers/processes.js';
import { postgresName } from '../helpers/resources.js';

const CLI = builtCli;

interface Instance {
  child: ChildProcess;
  output: () => string;
  exited: Promise<unknown>;
}

/** `openvat serve` on a free port; resolves once `/health` answers, with what it printed. */
async function start(env: Record<string, string>): Promise<Instance> {
  const port = await freePort();
  const child = spawn(process.execPath, [...CLI, 'serve'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      OPENVAT_TEDB_URL: 'off',
      OPENVAT_STATUS_POLL_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    out += d;
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited: ${out}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) return { child, output: () => out, exited };
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A fresh, empty PostgreSQL schema, named by a URL the service takes, and a way to read it. */
async function emptyDatabase() {
  const url = process.env.TEST_DATABASE_URL as string;
  const schema = postgresName('first');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await admin.end();
  }
  const databaseUrl = new URL(url);
  databaseUrl.searchParams.set('options', `-c search_path=${schema}`);
  return {
    databaseUrl: databaseUrl.toString(),
    open: () => createDatabase(url, { schema }),
    async dispose() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Resolves once one of `instances` has printed the whole first-start banner (within 60 s). */
async function bannerPrinted(instances: Instance[]): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!instances.some((i) => /First start[\s\S]*More keys:/.test(i.output()))) {
    if (Date.now() > deadline) return; // the assertions below then say what was printed
    await new Promise((r) => setTimeout(r, 50));
  }
}

// Several instances on one database is the scaled shape, on PostgreSQL (the embedded shape, SQLite,
// is one instance).
for (const target of (await databaseTargets()).filter((t) => t.name === 'postgres')) {
  describe(`instances starting together on one empty database (${target.name})`, {
    skip: target.skip,
  }, () => {
    it("make the first start's keys once: exactly one instance creates and prints them", async () => {
      for (let trial = 0; trial < 3; trial++) {
        const database = await emptyDatabase();
        const started = await Promise.allSettled(
          [0, 1, 2].map(() => start({ DATABASE_URL: database.databaseUrl })),
        );
        const instances = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
        try {
          for (const s of started) if (s.status === 'rejected') throw s.reason;
          // /health answers once an instance listens; the first start's keys are made after that,
          // under the database's lock, and printed as its last step: wait for the banner's end
          // instead of reading the output at once.
          await bannerPrinted(instances);
          const printers = instances.filter((i) => /First start/.test(i.output()));
          assert.equal(printers.length, 1, `trial ${trial}: one instance printed the first start's keys`);
          const printedAdmin = new Set(
            instances.flatMap((i) => i.output().match(/svc_admin_[0-9A-Za-z]{32}/g) ?? []),
          );
          const printedTest = new Set(
            instances.flatMap((i) => i.output().match(/svc_test_[0-9A-Za-z]{32}/g) ?? []),
          );
          assert.equal(printedAdmin.size, 1, `trial ${trial}: one admin key printed`);
          assert.equal(printedTest.size, 1, `trial ${trial}: one test key printed`);
          const db = database.open();
          try {
            const admins = await db.kysely.selectFrom('admin_keys').select('key_prefix').execute();
            const keys = await db.kysely.selectFrom('api_keys').select('key_prefix').execute();
            const accounts = await db.kysely.selectFrom('accounts').select('name').execute();
            assert.deepEqual(
              admins.map((r) => r.key_prefix),
              [[...printedAdmin][0]?.slice(0, 14)],
              `trial ${trial}: one admin key stored, the one printed`,
            );
            assert.deepEqual(
              keys.map((r) => r.key_prefix),
              [[...printedTest][0]?.slice(0, 13)],
              `trial ${trial}: one API key stored, the one printed`,
            );
            assert.deepEqual(
              accounts.map((r) => r.name),
              ['Default'],
              'the test key is in an account named Default',
            );
          } finally {
            await db.close();
          }
        } finally {
          for (const instance of instances) {
            instance.child.kill('SIGTERM');
            await instance.exited;
          }
          await database.dispose();
        }
      }
    });
  });
}

// A new SQLite file and several processes at once (a service and a CLI command, or a restart racing
// its predecessor): each migrates it, and each must find the others' migrations done, not run them
// again ("table … already exists").
describe('commands starting together on one new SQLite file', () => {
  it('each migrates it: every one succeeds and every migration is applied once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openvat-first-'));
    try {
      for (let trial = 0; trial < 3; trial++) {
        const url = `sqlite:${join(dir, `trial-${trial}.sqlite`)}`;
        const runs = await Promise.all(
          [0, 1, 2, 3].map(
            () =>
              new Promise<{ code: number; stderr: string }>((resolve) => {
                execFile(
                  process.execPath,
                  [...CLI, 'migrate'],
                  { env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' }, timeout: 60_000 },
                  (error, _stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
                );
              }),
          ),
        );
        for (const run of runs) assert.equal(run.code, 0, `trial ${trial}: ${run.stderr}`);
        const db = createDatabase(url);
        try {
          const applied = await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(db.kysely);
          const names = applied.rows.map((row) => row.name);
          assert.ok(names.length > 0, 'the migrations are recorded');
          assert.equal(new Set(names).size, names.length, `trial ${trial}: each migration once`);
        } finally {
          await db.close();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
