import assert from 'node:assert/strict';
import { type ChildProcess, execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { randomBase62 } from '../../src/lib/crypto.js';
import { builtCli } from '../helpers/cli.js';
import { databaseTargets } from '../helpers/db.js';
import { startServerProcess } from '../helpers/processes.js';
import { postgresName } from '../helpers/resources.js';

const exec = promisify(execFile);
const CLI = builtCli;

interface Entry {
  actor: { id: string; name: string };
  action: string;
  target: { type: string; id: string };
  changes: Record<string, unknown>;
}

/** The CLI on `databaseUrl`, which must succeed. */
async function cli(databaseUrl: string, args: string[]) {
  const { OPENVAT_ADMIN_URL: _url, OPENVAT_ADMIN_KEY: _key, ...inherited } = process.env;
  const { stdout } = await exec(process.execPath, [...CLI, ...args], {
    env: { ...inherited, LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl },
  });
  return stdout;
}

/** Stops a server process and waits for it to exit. */
async function stop(child: ChildProcess) {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

// The most privileged changes are in the admin audit log: an admin key made from OPENVAT_ADMIN_KEY
// at start (once, however often the service starts), and admin keys created and revoked with
// `openvat admin-keys` on the server, on SQLite and PostgreSQL.
for (const target of await databaseTargets()) {
  describe(`admin keys in the audit log (${target.name})`, { skip: target.skip }, () => {
    const adminKey = `svc_admin_${randomBase62(32)}`;
    let dir: string;
    let databaseUrl: string;
    let client: pg.Client | null = null;
    let schema: string | null = null;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'openvat-admin-audit-'));
      if (target.name === 'sqlite') {
        databaseUrl = `sqlite:${join(dir, 'openvat.db')}`;
        return;
      }
      schema = postgresName('audit');
      client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await client.connect();
      await client.query(`CREATE SCHEMA ${schema}`);
      const url = new URL(process.env.TEST_DATABASE_URL as string);
      url.searchParams.set('options', `-c search_path=${schema}`);
      databaseUrl = url.toString();
    });
    after(async () => {
      rmSync(dir, { recursive: true, force: true });
      if (client && schema) {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await client.end();
      }
    });

    async function auditLog(url: string): Promise<{ entries: Entry[]; body: string }> {
      const res = await fetch(`${url}/admin/v1/audit-log?limit=200`, {
        headers: { authorization: `Bearer ${adminKey}` },
      });
      const body = await res.text();
      assert.equal(res.status, 200, body);
      return { entries: (JSON.parse(body) as { data: Entry[] }).data, body };
    }

    it('records OPENVAT_ADMIN_KEY at start once, and the CLI creating and revoking an admin key', async () => {
      await cli(databaseUrl, ['migrate']);
      const first = await startServerProcess({ DATABASE_URL: databaseUrl, OPENVAT_ADMIN_KEY: adminKey });
      const me = await fetch(`${first.url}/admin/v1/me`, {
        headers: { authorization: `Bearer ${adminKey}` },
      });
      const startKeyId = ((await me.json()) as { data: { id: string } }).data.id;

      const created = JSON.parse(
        await cli(databaseUrl, ['admin-keys', 'create', '--name', 'night shift', '--role', 'read', '--json']),
      ) as { id: string; key: string };
      await cli(databaseUrl, ['admin-keys', 'revoke', created.id]);
      await stop(first.child);

      // A second start with the same key adds nothing.
      const second = await startServerProcess({ DATABASE_URL: databaseUrl, OPENVAT_ADMIN_KEY: adminKey });
      try {
        const { entries, body } = await auditLog(second.url);
        const adminKeyEntries = entries.filter((e) => e.target.type === 'admin_key');
        assert.deepEqual(
          adminKeyEntries.map((e) => [e.action, e.target.id]),
          [
            ['admin_key.revoke', created.id],
            ['admin_key.create', created.id],
            ['admin_key.create', startKeyId],
          ],
        );
        const [revoked, made, atStart] = adminKeyEntries as [Entry, Entry, Entry];
        for (const entry of [revoked, made]) {
          assert.equal(entry.actor.id, '00000000-0000-0000-0000-000000000000');
          assert.match(entry.actor.name, /^cli \(.+@.+\)$/);
        }
        assert.deepEqual(made.changes, {
          name: 'night shift',
          role: 'read',
          prefix: created.key.slice(0, 14),
        });
        assert.deepEqual(Object.keys(revoked.changes), ['revoked_at']);
        assert.deepEqual(atStart.actor, {
          id: '00000000-0000-0000-0000-000000000001',
          name: 'openvat (at start)',
        });
        assert.deepEqual(atStart.changes, {
          name: 'OPENVAT_ADMIN_KEY',
          role: 'admin',
          prefix: adminKey.slice(0, 14),
          source: 'OPENVAT_ADMIN_KEY',
        });
        assert.ok(!body.includes(adminKey) && !body.includes(created.key), 'no secret in the log');
      } finally {
        await stop(second.child);
      }
    });
  });
}
