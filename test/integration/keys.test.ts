import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createManualClock } from '../../src/lib/clock.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import { createIdGenerator } from '../../src/lib/ids.js';
import { createKeysRepository } from '../../src/modules/keys/repository.js';
import { createKeysService } from '../../src/modules/keys/service.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';

for (const target of await databaseTargets()) {
  describe(`keys on ${target.name}`, { skip: target.skip }, () => {
    let db: TestDb;
    let service: ReturnType<typeof createKeysService>;
    const clock = createManualClock('2026-11-22T10:00:00.000Z');

    before(async () => {
      db = await target.open();
      service = createKeysService({
        db: db.kysely,
        repository: createKeysRepository(db.kysely),
        clock,
        ids: createIdGenerator(),
      });
    });
    after(() => db.dispose());

    it('creates a key shown once and stores only its SHA-256', async () => {
      const created = await service.createKey({ plan: 'pro', mode: 'live' });
      assert.match(created.key, /^svc_live_[0-9A-Za-z]{32}$/);
      const rows = await db.kysely.selectFrom('api_keys').selectAll().where('id', '=', created.id).execute();
      assert.equal(rows.length, 1);
      const row = rows[0]!;
      assert.equal(row.key_hash, sha256Hex(created.key));
      assert.ok(!JSON.stringify(row).includes(created.key), 'the full key must not be stored');
      assert.equal(row.key_prefix, created.key.slice(0, 13));
      assert.equal(row.created_at, '2026-11-22T10:00:00.000Z');
    });

    it('authenticates a key and returns plan, mode, account and default requester', async () => {
      const created = await service.createKey({
        plan: 'business',
        mode: 'test',
        defaultRequesterVat: 'DE136695976',
      });
      const found = await service.authenticate(created.key);
      assert.ok(found.kind === 'ok', 'the key is accepted');
      assert.deepEqual(found.principal, {
        id: created.id,
        accountId: created.accountId,
        plan: 'business',
        mode: 'test',
        defaultRequesterVat: 'DE136695976',
        policy: {
          expiresAt: null,
          rolled: false,
          scopes: null,
          allowlist: null,
          rateLimitPerMinute: null,
          monthlyQuota: null,
          quotaKeyId: null,
        },
      });
    });

    it('rejects malformed, unknown and revoked keys', async () => {
      const created = await service.createKey({ plan: 'starter', mode: 'live' });
      const reason = async (key: string) => {
        const found = await service.authenticate(key);
        return found.kind === 'refused' ? found.reason : found.kind;
      };
      assert.equal(await reason('svc_live_short'), 'key_unknown');
      assert.equal(await reason(`${created.key}x`), 'key_unknown');
      assert.equal(await reason(created.key.replace('svc_live_', 'svc_test_')), 'key_unknown');
      assert.equal(await reason(`svc_live_${'A'.repeat(32)}`), 'key_unknown');
      assert.equal(await reason(`svc_admin_${'A'.repeat(32)}`), 'admin_key');
      assert.equal(await reason(created.key), 'ok');
      assert.equal((await service.revokeKey(created.id)).kind, 'ok');
      const revoked = await service.authenticate(created.key);
      assert.equal(revoked.kind, 'refused');
      assert.equal(revoked.kind === 'refused' && revoked.reason, 'key_revoked');
      assert.match(revoked.kind === 'refused' ? revoked.message : '', /^This API key was revoked at 2026-/);
      assert.deepEqual(
        await service.revokeKey(created.id),
        { kind: 'refused', reason: 'not_found', message: `No active key has the id ${created.id}.` },
        'revoking twice is refused: nothing to revoke',
      );
    });

    it('adds a key to an existing account and refuses an unknown account', async () => {
      const first = await service.createKey({ plan: 'business', mode: 'live' });
      const second = await service.createKey({ plan: 'business', mode: 'test', accountId: first.accountId });
      assert.equal(second.accountId, first.accountId);
      await assert.rejects(
        service.createKey({ plan: 'free', mode: 'test', accountId: '0190b2a4-0000-7000-8000-000000000000' }),
        /does not exist/,
      );
    });

    it('lists keys without the secrets', async () => {
      const list = await service.listKeys();
      assert.ok(list.length >= 4);
      for (const k of list) {
        assert.equal(k.prefix.length, 13);
        assert.ok(!('key' in k));
      }
      assert.equal(await service.countKeys(), list.length);
    });
  });
}
