import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { createIdGenerator } from '../../src/lib/ids.js';
import { createAdminRepository } from '../../src/modules/admin/repository.js';
import { createAdminService, START_ACTOR } from '../../src/modules/admin/service.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

// Revoking an admin key: the revocation and its audit entry, or a not_found refusal (and nothing
// written) when no active admin key has the id.
for (const target of await databaseTargets()) {
  describe(`admin key revocation (${target.name})`, { skip: target.skip }, () => {
    let db: TestDb;
    let admin: ReturnType<typeof createAdminService>;
    const clock = createManualClock('2026-12-01T09:00:00.000Z');

    before(async () => {
      db = await target.open();
      admin = createAdminService({
        repository: createAdminRepository(db.kysely),
        clock,
        ids: createIdGenerator(),
        auditRetentionDays: 400,
      });
    });
    after(() => db.dispose());

    const revocations = async (id: string) =>
      (
        await db.kysely
          .selectFrom('admin_audit_log')
          .select('action')
          .where('target_id', '=', id)
          .where('action', '=', 'admin_key.revoke')
          .execute()
      ).length;

    it('revokes an active key once, then refuses it as not found', async () => {
      const { summary } = await admin.createKey('night shift', 'read');
      clock.advance(60_000);
      assert.deepEqual(await admin.revokeKey(summary.id, START_ACTOR), {
        kind: 'ok',
        revokedAt: '2026-12-01T09:01:00.000Z',
      });
      assert.equal(await revocations(summary.id), 1);
      assert.equal(
        (await admin.listKeys()).find((k) => k.id === summary.id)?.revoked_at,
        '2026-12-01T09:01:00.000Z',
      );

      clock.advance(60_000);
      assert.deepEqual(await admin.revokeKey(summary.id, START_ACTOR), {
        kind: 'refused',
        reason: 'not_found',
        message: `No active admin key has the id ${summary.id}.`,
      });
      assert.equal(await revocations(summary.id), 1, 'a refused revocation records nothing');
      assert.equal(
        (await admin.listKeys()).find((k) => k.id === summary.id)?.revoked_at,
        '2026-12-01T09:01:00.000Z',
        'the first revocation time stays',
      );
    });

    it('refuses an id no admin key has', async () => {
      const missing = '0193a5b0-0000-7000-8000-000000000000';
      const refused = await admin.revokeKey(missing, START_ACTOR);
      assert.equal(refused.kind, 'refused');
      assert.equal(refused.kind === 'refused' && refused.reason, 'not_found');
      assert.equal(await revocations(missing), 0);
    });
  });
}
