import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type Container, createContainer } from '../../src/container.js';
import { createManualClock } from '../../src/lib/clock.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { snapshot } from '../helpers/db-snapshot.js';
import { assertErrorBody } from '../helpers/error-body.js';

// The admin API on SQLite and PostgreSQL: accounts, keys and their lifecycle as /v1 enforces it,
// the audit log, and bad input refused with nothing stored.
for (const target of await databaseTargets()) {
  describe(`admin API and key enforcement (${target.name})`, { skip: target.skip }, () => {
    let db: TestDb;
    let app: FastifyInstance;
    let container: Container;
    let admin: { authorization: string };
    let adminId: string;
    const clock = createManualClock('2026-11-27T10:00:00.000Z');

    before(async () => {
      db = await target.open();
      const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent' });
      container = await createContainer(config, { db, clock, redis: null });
      app = await buildApp(container);
      const created = await container.admin.createKey('ops', 'admin');
      admin = { authorization: `Bearer ${created.key}` };
      adminId = created.summary.id;
    });
    after(async () => {
      await app.close();
      await container.close();
    });

    const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object, headers = admin) =>
      app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
    const validate = (key: string, remoteAddress = '10.0.0.1') =>
      app.inject({
        method: 'GET',
        url: '/v1/validate?vat_number=DE100000008',
        headers: { authorization: `Bearer ${key}` },
        remoteAddress,
      });
    async function account(name = 'Acme GmbH') {
      const response = await call('POST', '/admin/v1/accounts', { name, external_id: `ext-${name}` });
      assert.equal(response.statusCode, 201, response.body);
      return response.json().data as { id: string };
    }
    async function key(body: Record<string, unknown>) {
      const response = await call('POST', '/admin/v1/keys', { plan: 'pro', mode: 'test', ...body });
      assert.equal(response.statusCode, 201, response.body);
      return response.json().data as { id: string; key: string; [field: string]: unknown };
    }

    it('creates, finds and changes accounts', async () => {
      const created = await account('Beispiel AG');
      const found = await call('GET', '/admin/v1/accounts?q=beispiel');
      assert.equal(found.statusCode, 200);
      assert.deepEqual(
        found.json().data.map((a: { id: string }) => a.id),
        [created.id],
      );
      assert.equal(found.json().meta.next_cursor, null);
      const byExternal = await call('GET', '/admin/v1/accounts?q=ext-Beispiel');
      assert.equal(byExternal.json().data.length, 1);
      const patched = await call('PATCH', `/admin/v1/accounts/${created.id}`, {
        metadata: { crm: '42' },
      });
      assert.equal(patched.statusCode, 200);
      assert.deepEqual(patched.json().data.metadata, { crm: '42' });
      assert.equal((await call('GET', `/admin/v1/accounts/${created.id}`)).json().data.name, 'Beispiel AG');
      assert.equal(
        (await call('GET', '/admin/v1/accounts/0196f000-0000-7000-8000-000000000000')).statusCode,
        404,
      );
    });

    it('creates a key whose secret is shown once and works on /v1; admin keys and API keys stay on their side', async () => {
      const { id: accountId } = await account('Shown Once');
      const created = await key({ account_id: accountId, name: 'shop', metadata: { env: 'prod' } });
      assert.match(created.key, /^svc_test_[0-9A-Za-z]{32}$/);
      assert.equal(created.status, 'active');
      const read = await call('GET', `/admin/v1/keys/${created.id}`);
      assert.equal(read.json().data.key, undefined, 'the secret is not shown again');
      assert.equal(read.json().data.prefix, created.key.slice(0, 13));
      assert.equal((await validate(created.key)).statusCode, 200);

      const adminOnV1 = await validate(admin.authorization.slice(7));
      assert.equal(adminOnV1.statusCode, 401);
      assert.match(adminOnV1.json().error.message, /admin key is not accepted here/);
      const keyOnAdmin = await call('GET', '/admin/v1/keys', undefined, {
        authorization: `Bearer ${created.key}`,
      });
      assert.equal(keyOnAdmin.statusCode, 401);
      assert.match(keyOnAdmin.json().error.message, /API key is not accepted here/);

      const listed = await call('GET', `/admin/v1/keys?account_id=${accountId}&status=active`);
      assert.deepEqual(
        listed.json().data.map((k: { id: string }) => k.id),
        [created.id],
      );
    });

    it('refuses bad input naming the field, and stores nothing', async () => {
      const { id: accountId } = await account('Bad Input');
      const beforeRows = await snapshot(db);
      const cases: Array<[string, Record<string, unknown>, RegExp]> = [
        ['unknown field', { account_id: accountId, colour: 'red' }, /Unknown field "colour"/],
        ['not a CIDR', { account_id: accountId, ip_allowlist: ['10.0.0.0/33'] }, /ip_allowlist/],
        ['past expiry', { account_id: accountId, expires_at: '2026-11-27T09:00:00Z' }, /expires_at/],
        ['unknown scope', { account_id: accountId, scopes: ['validate', 'teleport'] }, /scopes/],
        ['unknown plan', { account_id: accountId, plan: 'platinum' }, /plan/],
        ['unknown account', { account_id: '0196f000-0000-7000-8000-000000000000' }, /account_id/],
      ];
      for (const [what, body, message] of cases) {
        const response = await call('POST', '/admin/v1/keys', { plan: 'pro', mode: 'test', ...body });
        assert.equal(response.statusCode, 400, what);
        assert.equal(response.json().error.code, 'invalid_format', what);
        assert.match(response.json().error.message, message, what);
      }
      const unknownAccountField = await call('POST', '/admin/v1/accounts', { name: 'x', tier: 'gold' });
      assert.equal(unknownAccountField.statusCode, 400);
      assert.match(unknownAccountField.json().error.message, /Unknown field "tier"/);
      assert.deepEqual(await snapshot(db), beforeRows, 'nothing stored');

      const good = await key({ account_id: accountId });
      const afterKey = await snapshot(db);
      const overlap = await call('POST', `/admin/v1/keys/${good.id}/roll`, {
        overlap_seconds: 7 * 86_400 + 1,
      });
      assert.equal(overlap.statusCode, 400);
      assert.match(overlap.json().error.message, /overlap_seconds/);
      const patch = await call('PATCH', `/admin/v1/keys/${good.id}`, { ip_allowlist: ['not-an-ip'] });
      assert.equal(patch.statusCode, 400);
      assert.match(patch.json().error.message, /ip_allowlist/);
      assert.deepEqual(await snapshot(db), afterKey, 'nothing stored');
    });

    it('answers 404 naming the id for a key that does not exist, and stores nothing', async () => {
      const missing = '0196f000-0000-7000-8000-00000000abcd';
      const beforeRows = await snapshot(db);
      const calls: Array<[string, () => ReturnType<typeof call>]> = [
        ['read', () => call('GET', `/admin/v1/keys/${missing}`)],
        ['patch', () => call('PATCH', `/admin/v1/keys/${missing}`, { name: 'renamed' })],
        ['revoke', () => call('POST', `/admin/v1/keys/${missing}/revoke`)],
        ['roll', () => call('POST', `/admin/v1/keys/${missing}/roll`, { overlap_seconds: 60 })],
      ];
      for (const [what, send] of calls) {
        const message = `No key has the id ${missing}.`;
        assertErrorBody(await send(), 404, { code: 'not_found', message }, what);
      }
      assert.deepEqual(await snapshot(db), beforeRows, 'nothing stored');
    });

    it('answers 404 naming the id for an account that does not exist, and stores nothing', async () => {
      const missing = '0196f000-0000-7000-8000-00000000dcba';
      const beforeRows = await snapshot(db);
      const calls: Array<[string, () => ReturnType<typeof call>]> = [
        ['read', () => call('GET', `/admin/v1/accounts/${missing}`)],
        ['patch', () => call('PATCH', `/admin/v1/accounts/${missing}`, { name: 'renamed' })],
        ['disable', () => call('PATCH', `/admin/v1/accounts/${missing}`, { disabled: true })],
      ];
      for (const [what, send] of calls) {
        const message = `No account has the id ${missing}.`;
        assertErrorBody(await send(), 404, { code: 'not_found', message }, what);
      }
      assert.deepEqual(await snapshot(db), beforeRows, 'nothing stored');
    });

    it('enforces expiry, revocation, a disabled account, scopes and the allowlist on /v1', async () => {
      const { id: accountId } = await account('Enforced');
      const expiring = await key({ account_id: accountId, expires_at: '2026-11-27T11:00:00.000Z' });
      const scoped = await key({ account_id: accountId, scopes: ['decide'] });
      const fenced = await key({ account_id: accountId, ip_allowlist: ['192.0.2.0/24', '2001:db8::/32'] });
      const revoked = await key({ account_id: accountId });

      assert.equal((await validate(expiring.key)).statusCode, 200);
      clock.advance(3_600_000);
      const expired = await validate(expiring.key);
      assert.equal(expired.statusCode, 401);
      assert.match(expired.json().error.message, /expired at 2026-11-27T11:00:00.000Z/);

      const outOfScope = await validate(scoped.key);
      assert.equal(outOfScope.statusCode, 403);
      assert.equal(outOfScope.json().error.code, 'scope_not_allowed');
      assert.match(outOfScope.json().error.message, /"validate"/);

      assert.equal((await validate(fenced.key, '192.0.2.7')).statusCode, 200);
      assert.equal((await validate(fenced.key, '2001:db8::1')).statusCode, 200);
      const outside = await validate(fenced.key, '198.51.100.1');
      assert.equal(outside.statusCode, 403);
      assert.equal(outside.json().error.code, 'ip_not_allowed');
      assert.match(outside.json().error.message, /198\.51\.100\.1/);

      assert.equal((await validate(revoked.key)).statusCode, 200);
      const revoking = await call('POST', `/admin/v1/keys/${revoked.id}/revoke`);
      assert.equal(revoking.statusCode, 200);
      assert.equal(revoking.json().data.status, 'revoked');
      const refused = await validate(revoked.key);
      assert.equal(refused.statusCode, 401, 'at once on this instance');
      assert.match(refused.json().error.message, /revoked at/);

      assert.equal((await validate(fenced.key, '192.0.2.7')).statusCode, 200);
      const disabling = await call('PATCH', `/admin/v1/accounts/${accountId}`, { disabled: true });
      assert.equal(disabling.statusCode, 200);
      const disabled = await validate(fenced.key, '192.0.2.7');
      assert.equal(disabled.statusCode, 401);
      assert.match(disabled.json().error.message, /account is disabled/);
      await call('PATCH', `/admin/v1/accounts/${accountId}`, { disabled: false });
      assert.equal((await validate(fenced.key, '192.0.2.7')).statusCode, 200, 'enabled again at once');

      // A scope or allowlist change applies at once.
      await call('PATCH', `/admin/v1/keys/${scoped.id}`, { scopes: ['validate'] });
      assert.equal((await validate(scoped.key)).statusCode, 200);
    });

    it('rolls a key: a new secret with the same settings, the old one until the overlap ends', async () => {
      const { id: accountId } = await account('Rolled');
      const old = await key({ account_id: accountId, scopes: ['validate'], rate_limit_per_minute: 5 });
      const rolled = await call('POST', `/admin/v1/keys/${old.id}/roll`, { overlap_seconds: 600 });
      assert.equal(rolled.statusCode, 201);
      const fresh = rolled.json().data;
      assert.notEqual(fresh.key, old.key);
      assert.deepEqual(fresh.scopes, ['validate']);
      assert.equal(fresh.rate_limit_per_minute, 5);
      assert.equal((await validate(fresh.key)).statusCode, 200);
      assert.equal((await validate(old.key)).statusCode, 200, 'the old key works during the overlap');
      assert.equal((await call('GET', `/admin/v1/keys/${old.id}`)).json().data.rolled_to, fresh.id);
      clock.advance(600_000);
      const ended = await validate(old.key);
      assert.equal(ended.statusCode, 401);
      assert.match(ended.json().error.message, /rolled to a new key; its overlap ended at/);
      assert.equal((await validate(fresh.key)).statusCode, 200);
    });

    it('records every write in the audit log, without secrets', async () => {
      const { id: accountId } = await account('Audited');
      const created = await key({ account_id: accountId });
      await call('PATCH', `/admin/v1/keys/${created.id}`, { name: 'renamed' });
      const log = await call('GET', `/admin/v1/audit-log?target_id=${created.id}`);
      assert.equal(log.statusCode, 200);
      const entries = log.json().data;
      assert.deepEqual(
        entries.map((e: { action: string }) => e.action),
        ['key.update', 'key.create'],
      );
      assert.equal(entries[0].actor.id, adminId);
      assert.equal(entries[0].actor.name, 'ops');
      assert.deepEqual(entries[0].changes, { name: { from: null, to: 'renamed' } });
      assert.match(entries[0].request_id, /^[0-9a-f-]{36}$/);
      assert.equal(typeof entries[0].client_address, 'string');
      assert.ok(!log.body.includes(created.key), 'no secret in the log');
      const byActor = await call('GET', `/admin/v1/audit-log?actor_id=${adminId}&limit=2`);
      assert.equal(byActor.json().data.length, 2);
      assert.notEqual(byActor.json().meta.next_cursor, null);
    });

    it('serves its own OpenAPI document, and keeps /admin out of the /v1 one', async () => {
      const document = (await app.inject({ method: 'GET', url: '/admin/openapi.json' })).json();
      assert.equal(document.openapi, '3.1.0');
      assert.ok(document.paths['/admin/v1/keys/{id}/roll'].post);
      const publicDocument = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
      assert.ok(!Object.keys(publicDocument.paths).some((path) => path.startsWith('/admin')));
    });
  });
}
