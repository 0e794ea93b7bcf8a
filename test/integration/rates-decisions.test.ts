import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { createTedbClient } from '../../src/registries/tedb.js';
import { createSimulatorServer, type SimulatorServer } from '../../src/simulators/server.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

// An operator's decisions on held changes through the admin API: who decided is kept with the change
// and in the admin audit log, written in the same transaction as the decision.
for (const target of await databaseTargets()) {
  describe(`rates decisions through the admin API on ${target.name}`, { skip: target.skip }, () => {
    let sim: SimulatorServer;
    let tedbUrl: string;
    let db: TestDb;
    let t: TestApp;
    const clock = createManualClock('2026-11-27T10:00:00Z');

    before(async () => {
      sim = createSimulatorServer({});
      tedbUrl = (await sim.listen(0, '127.0.0.1')).urls.OPENVAT_TEDB_URL as string;
    });
    after(async () => {
      await sim.close();
    });
    beforeEach(async () => {
      clock.set('2026-11-27T10:00:00Z');
      sim.control({ tedb: { reset: true } });
      db = await target.open();
      t = await buildTestApp(
        { OPENVAT_TEDB_URL: tedbUrl },
        {
          clock,
          db: { ...db, close: async () => {} },
          tedb: createTedbClient({ url: tedbUrl, timeoutMs: 5_000 }),
        },
      );
    });
    afterEach(async () => {
      await t.close();
      await db.dispose();
    });

    const call = (method: 'GET' | 'POST', url: string, key: string) =>
      t.app.inject({ method, url, headers: { authorization: `Bearer ${key}` }, remoteAddress: '10.3.0.7' });

    it('lists held changes, accepts and rejects them with an admin key, and logs each decision with the change and its operator', async () => {
      sim.control({ tedb: { announce: { country: 'DE', from: '2027-01-01', standard: 26 } } });
      sim.control({ tedb: { announce: { country: 'AT', from: '2027-01-01', reduced: [10, 13, 14] } } });
      assert.equal((await t.container.ratesUpdates.syncNow()).kind, 'synced');
      const ops = await t.container.admin.createKey('ops', 'admin');
      const viewer = await t.container.admin.createKey('viewer', 'read');

      const listed = await call('GET', '/admin/v1/rates/changes', viewer.key);
      assert.equal(listed.statusCode, 200, listed.body);
      const held = listed.json().data as {
        id: string;
        country_code: string;
        status: string;
        reason: string;
      }[];
      assert.deepEqual(
        held.map((c) => [c.country_code, c.status]),
        [
          ['at', 'held'],
          ['de', 'held'],
        ],
      );
      const [at, de] = held as [(typeof held)[0], (typeof held)[0]];
      const refused = await call('POST', `/admin/v1/rates/changes/${de.id}/accept`, viewer.key);
      assert.equal(refused.statusCode, 403);

      const accepted = await call('POST', `/admin/v1/rates/changes/${de.id}/accept`, ops.key);
      assert.equal(accepted.statusCode, 200, accepted.body);
      assert.equal(accepted.json().data.status, 'applied');
      assert.equal(accepted.json().data.decided_by, `admin key ops (${ops.summary.id})`);
      assert.equal(accepted.json().data.decided_at, '2026-11-27T10:00:00.000Z');
      const rejected = await call('POST', `/admin/v1/rates/changes/${at.id}/reject`, ops.key);
      assert.equal(rejected.statusCode, 200, rejected.body);
      assert.equal(rejected.json().data.status, 'rejected');

      const again = await call('POST', `/admin/v1/rates/changes/${at.id}/accept`, ops.key);
      assert.equal(again.statusCode, 400);
      assert.match(again.json().error.message, /is not held \(any more\)/);
      const unknown = await call(
        'POST',
        '/admin/v1/rates/changes/0193a5b0-0000-7000-8000-000000000000/reject',
        ops.key,
      );
      assert.equal(unknown.statusCode, 404);
      assert.deepEqual(
        (
          (await call('GET', '/admin/v1/rates/changes?status=applied', ops.key)).json().data as {
            id: string;
          }[]
        ).map((c) => c.id),
        [de.id],
      );

      const log = await call('GET', '/admin/v1/audit-log', viewer.key);
      assert.equal(log.statusCode, 200, log.body);
      const entries = (log.json().data as Record<string, unknown>[]).filter(
        (e) => (e.target as { type: string }).type === 'rate_change',
      );
      assert.deepEqual(
        entries.map((e) => ({ ...e, id: undefined, created_at: undefined })),
        [
          {
            id: undefined,
            actor: { id: ops.summary.id, name: 'ops' },
            action: 'rate_change.reject',
            target: { type: 'rate_change', id: at.id },
            changes: {
              status: { from: 'held', to: 'rejected' },
              country_code: 'at',
              valid_from: '2027-01-01',
              rates: {
                standard_rate: 20,
                reduced_rates: [10, 13, 14],
                super_reduced_rate: 4.9,
                parking_rate: 13,
              },
              reason: at.reason,
            },
            request_id: rejected.json().meta.request_id,
            client_address: '10.3.0.7',
            created_at: undefined,
          },
          {
            id: undefined,
            actor: { id: ops.summary.id, name: 'ops' },
            action: 'rate_change.accept',
            target: { type: 'rate_change', id: de.id },
            changes: {
              status: { from: 'held', to: 'applied' },
              country_code: 'de',
              valid_from: '2027-01-01',
              rates: { standard_rate: 26, reduced_rates: [7], super_reduced_rate: null, parking_rate: null },
              reason: de.reason,
            },
            request_id: accepted.json().meta.request_id,
            client_address: '10.3.0.7',
            created_at: undefined,
          },
        ],
      );
      // Only decisions are logged: the refused, repeated and unknown ones left nothing.
      const byTarget = await call('GET', `/admin/v1/audit-log?target_id=${at.id}`, ops.key);
      assert.equal(byTarget.json().data.length, 1);
    });
  });
}
