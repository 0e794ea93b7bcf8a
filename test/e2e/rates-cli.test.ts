import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { buildTestApp } from '../helpers/app.js';
import { builtCli } from '../helpers/cli.js';

describe('openvat rates sync|held|accept|reject', () => {
  let dir: string;
  let databaseUrl: string;
  let sim: SimulatorServer;
  let tedbUrl: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-rates-'));
    databaseUrl = `sqlite:${join(dir, 'db.sqlite')}`;
    const t = await buildTestApp({ DATABASE_URL: databaseUrl });
    await t.close();
    sim = createSimulatorServer({});
    tedbUrl = (await sim.listen(0, '127.0.0.1')).urls.OPENVAT_TEDB_URL as string;
  });
  after(async () => {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The CLI as a child process (asynchronously: the simulator answers from this process). */
  function cli(env: Record<string, string>, ...args: string[]) {
    return new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [...builtCli, 'rates', ...args],
        { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', ...env }, timeout: 60_000 },
        (error, stdout, stderr) => resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  }
  const rates = (...args: string[]) => cli({ OPENVAT_TEDB_URL: tedbUrl }, ...args);

  // The CLI runs on the system clock: an announcement two months ahead is within the year it asks for.
  const day = new Date(Date.now() + 60 * 86_400_000).toISOString().slice(0, 10);

  it('syncs, lists the held changes, and takes an operator decision on each', async () => {
    sim.control({ tedb: { reset: true, fault: 'soap' } });
    const failed = await rates('sync');
    assert.equal(failed.status, 1, failed.stderr);
    assert.match(failed.stderr, /the rates sync changed nothing: TEDB answered a SOAP fault/);

    sim.control({ tedb: { fault: null, announce: { country: 'DE', from: day, standard: 26 } } });
    sim.control({ tedb: { announce: { country: 'FI', from: day, standard: 24 } } });
    sim.control({ tedb: { announce: { country: 'AT', from: day, reduced: [10, 13, 14] } } });
    const synced = await rates('sync');
    assert.equal(synced.status, 0, synced.stderr);
    assert.match(synced.stdout, /rates synced: 1 change applied, 2 held, 0 withdrawn or superseded/);

    const held = await rates('held');
    assert.equal(held.status, 0, held.stderr);
    const lines = held.stdout.trim().split('\n');
    assert.equal(lines.length, 2);
    const [atId, atCountry] = (lines[0] as string).split('\t');
    assert.equal(atCountry, 'at');
    const [id, country, from, what, why] = (lines[1] as string).split('\t');
    assert.deepEqual([country, from, what], ['de', day, 'standard 26%, reduced 7%']);
    assert.match(why ?? '', /more than 5 points \(19% → 26%\)/);
    assert.match(held.stderr, /2 held changes/);

    const accepted = await rates('accept', id as string);
    assert.equal(accepted.status, 0, accepted.stderr);
    assert.match(accepted.stdout, new RegExp(`accepted: de from ${day}, standard 26%`));
    const rejected = await rates('reject', atId as string);
    assert.equal(rejected.status, 0, rejected.stderr);
    const again = await rates('reject', id as string);
    assert.equal(again.status, 2);
    assert.match(again.stderr, /is not held \(any more\)/);

    // Both decisions are in the admin audit log, the CLI as the operator, as for `openvat keys`.
    const t = await buildTestApp({ DATABASE_URL: databaseUrl });
    try {
      const admin = await t.container.admin.createKey('auditor', 'read');
      const log = await t.app.inject({
        method: 'GET',
        url: '/admin/v1/audit-log',
        headers: { authorization: `Bearer ${admin.key}` },
      });
      const operator = `cli (${userInfo().username}@${hostname()})`;
      assert.deepEqual(
        (log.json().data as { actor: unknown; action: string; target: { type: string; id: string } }[])
          .filter((e) => e.target.type === 'rate_change')
          .map((e) => [e.actor, e.action, e.target.id]),
        [
          [{ id: '00000000-0000-0000-0000-000000000000', name: operator }, 'rate_change.reject', atId],
          [{ id: '00000000-0000-0000-0000-000000000000', name: operator }, 'rate_change.accept', id],
        ],
      );
      const [release] = await t.container.ratesUpdates
        .changes(['applied'])
        .then((all) => all.filter((c) => c.id === id));
      assert.equal(release?.decided_by, operator);
    } finally {
      await t.close();
    }
    const unknown = await rates('accept', 'nope');
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /no rate change with id nope/);
    assert.equal((await rates('held')).stdout, '');

    const off = await cli({ OPENVAT_TEDB_URL: 'off' }, 'sync');
    assert.equal(off.status, 2);
    assert.match(off.stderr, /the rates sync is off \(OPENVAT_TEDB_URL=off\)/);
  });
});
