import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/database.js';
import { createManualClock } from '../../src/lib/clock.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

const DAY = 86_400_000;

// The admin audit log is kept OPENVAT_ADMIN_AUDIT_RETENTION_DAYS; the hourly retention purge deletes
// older entries and keeps the newer ones.
for (const target of await databaseTargets()) {
  describe(`admin audit log retention (${target.name})`, { skip: target.skip }, () => {
    let db: TestDb;
    let shared: Db;
    let t: TestApp;
    let admin: { authorization: string };
    const clock = createManualClock('2026-01-10T08:00:00.000Z');

    before(async () => {
      db = await target.open();
      shared = { ...db, close: async () => {} };
      t = await buildTestApp({ OPENVAT_STATUS_POLL_MS: '0' }, { db: shared, clock, redis: null });
      admin = { authorization: `Bearer ${(await t.container.admin.createKey('ops', 'admin')).key}` };
    });
    after(async () => {
      await t.close();
      await db.dispose();
    });

    const write = async (name: string) => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/accounts',
        headers: admin,
        payload: { name },
      });
      assert.equal(response.statusCode, 201, response.body);
      return response.json().data.id as string;
    };
    const logged = async () =>
      (await t.app.inject({ method: 'GET', url: '/admin/v1/audit-log?limit=200', headers: admin }))
        .json()
        .data.filter((e: { target: { type: string } }) => e.target.type === 'account')
        .map((e: { target: { id: string } }) => e.target.id) as string[];

    it('purges entries older than the retention (400 days) and keeps the newer ones', async () => {
      const old = await write('Old GmbH');
      clock.advance(200 * DAY);
      const newer = await write('Newer GmbH');
      clock.advance(200 * DAY);
      assert.equal(await t.container.admin.purgeAuditLog(), 0, 'exactly 400 days old: kept');
      assert.deepEqual((await logged()).sort(), [old, newer].sort());

      clock.advance(1);
      assert.equal(
        await t.container.admin.purgeAuditLog(1),
        2,
        'older than 400 days: purged (the old account and the admin key made before it)',
      );
      assert.deepEqual(await logged(), [newer]);
      const rows = await shared.kysely
        .selectFrom('admin_audit_log')
        .select('target_id')
        .where('target_type', '=', 'account')
        .execute();
      assert.deepEqual(
        rows.map((r) => r.target_id),
        [newer],
      );
    });
  });
}

// After the suites above: a suite declared before the top-level await may end the file's run before
// they are declared.
describe('OPENVAT_ADMIN_AUDIT_RETENTION_DAYS', () => {
  it('is 400 days by default, and refused below a year naming the setting', () => {
    assert.equal(loadConfig({}).admin.auditRetentionDays, 400);
    assert.equal(loadConfig({ OPENVAT_ADMIN_AUDIT_RETENTION_DAYS: '365' }).admin.auditRetentionDays, 365);
    assert.throws(
      () => loadConfig({ OPENVAT_ADMIN_AUDIT_RETENTION_DAYS: '364' }),
      /OPENVAT_ADMIN_AUDIT_RETENTION_DAYS must be between 365 and/,
    );
  });
});
