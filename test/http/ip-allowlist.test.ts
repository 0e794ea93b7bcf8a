import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type Container, createContainer } from '../../src/container.js';
import { databaseTargets, type TestDb } from '../helpers/db.js';
import { snapshot } from '../helpers/db-snapshot.js';

// A key's IP allowlist takes each address in the one form every reader takes alike: no leading
// zeros (read as octal by some: 192.168.001.010 as 192.168.1.8), no shortened, hexadecimal or
// single-number IPv4, no zone id, no bits beyond a CIDR's prefix. What is stored is normalised, and
// an entry stored before these rules that is not an address as written admits nothing.
for (const target of await databaseTargets()) {
  describe(`IP allowlists as written (${target.name})`, { skip: target.skip }, () => {
    let db: TestDb;
    let app: FastifyInstance;
    let container: Container;
    let admin: { authorization: string };
    let accountId: string;

    before(async () => {
      db = await target.open();
      container = await createContainer(
        loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent' }),
        {
          db,
          redis: null,
        },
      );
      app = await buildApp(container);
      admin = { authorization: `Bearer ${(await container.admin.createKey('ops', 'admin')).key}` };
      const account = await app.inject({
        method: 'POST',
        url: '/admin/v1/accounts',
        headers: admin,
        payload: { name: 'Fenced' },
      });
      accountId = account.json().data.id;
    });
    after(async () => {
      await app.close();
      await container.close();
    });

    const createKey = (ip_allowlist: string[]) =>
      app.inject({
        method: 'POST',
        url: '/admin/v1/keys',
        headers: admin,
        payload: { account_id: accountId, plan: 'pro', mode: 'test', ip_allowlist },
      });
    const validate = (key: string, remoteAddress: string) =>
      app.inject({
        method: 'GET',
        url: '/v1/validate?vat_number=DE100000008',
        headers: { authorization: `Bearer ${key}` },
        remoteAddress,
      });

    it('refuses every entry that some reader takes for another address, naming it, and stores nothing', async () => {
      const kept = await createKey(['203.0.113.0/24']);
      assert.equal(kept.statusCode, 201, kept.body);
      const before = await snapshot(db);
      const cases: Array<[string, RegExp]> = [
        ['192.168.001.010', /"192\.168\.001\.010" is not an IPv4 address as written.*leading zeros/],
        ['010.000.000.001', /"010\.000\.000\.001" is not an IPv4 address as written/],
        ['127.1', /"127\.1" is not an IPv4 address as written/],
        ['0x7f.0.0.1', /"0x7f\.0\.0\.1" is not an IPv4 address as written/],
        ['2130706433', /"2130706433" is not an IPv4 address as written/],
        ['fe80::1%eth0', /"fe80::1%eth0" has a zone id \(%eth0\)/],
        ['10.0.0.0/024', /"10\.0\.0\.0\/024": the prefix length must be a whole number from 0 to 32/],
        ['10.0.0.0/33', /"10\.0\.0\.0\/33": the prefix length/],
        [
          '192.168.1.77/24',
          /"192\.168\.1\.77\/24" has bits set beyond its \/24 prefix: write 192\.168\.1\.0\/24 for the range, or 192\.168\.1\.77 for the one address/,
        ],
        ['2001:db8::1/32', /write 2001:db8::\/32 for the range/],
        ['::ffff:127.1', /"::ffff:127\.1" is not an IPv4 or IPv6 address or CIDR/],
      ];
      for (const [entry, message] of cases) {
        for (const response of [
          await createKey(['198.51.100.7', entry]),
          await app.inject({
            method: 'PATCH',
            url: `/admin/v1/keys/${kept.json().data.id}`,
            headers: admin,
            payload: { ip_allowlist: [entry] },
          }),
        ]) {
          assert.equal(response.statusCode, 400, `${entry}: ${response.body}`);
          const { error } = response.json();
          assert.equal(error.code, 'invalid_format', entry);
          assert.match(error.message, /^ip_allowlist: /, entry);
          assert.match(error.message, message, entry);
        }
      }
      assert.deepEqual(await snapshot(db), before, 'nothing stored');
    });

    it('stores and shows each entry in one form: IPv6 compressed in lower case, once', async () => {
      const created = await createKey([
        '2001:DB8:0:0::/32',
        '203.0.113.0/24',
        '2001:0db8:0000:0000:0000:0000:0000:0001',
        '::FFFF:C000:0201',
        '2001:db8::/32',
      ]);
      assert.equal(created.statusCode, 201, created.body);
      const shown = ['2001:db8::/32', '203.0.113.0/24', '2001:db8::1', '::ffff:192.0.2.1'];
      assert.deepEqual(created.json().data.ip_allowlist, shown);
      const { id, key } = created.json().data;
      const read = await app.inject({ method: 'GET', url: `/admin/v1/keys/${id}`, headers: admin });
      assert.deepEqual(read.json().data.ip_allowlist, shown);
      const row = await db.kysely
        .selectFrom('api_keys')
        .select('ip_allowlist')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(row.ip_allowlist as string), shown);
      assert.equal((await validate(key, '192.0.2.1')).statusCode, 200, 'the IPv4-mapped entry');
      assert.equal((await validate(key, '2001:db8:ffff::9')).statusCode, 200);
      assert.equal((await validate(key, '192.0.2.2')).statusCode, 403);
    });

    it('an entry stored before that is not an address as written admits nothing, and the refusal says so', async () => {
      const created = await createKey(['198.51.100.1']);
      const { id, key } = created.json().data;
      // As an earlier version stored them: a leading-zero address (which it read as 192.168.1.8) and
      // a CIDR with bits beyond its prefix (which it read as its range).
      await db.kysely
        .updateTable('api_keys')
        .set({ ip_allowlist: JSON.stringify(['192.168.001.010', '203.0.113.7/24']) })
        .where('id', '=', id)
        .execute();
      for (const address of ['192.168.1.8', '192.168.1.10']) {
        const refused = await validate(key, address);
        assert.equal(refused.statusCode, 403, address);
        assert.equal(refused.json().error.code, 'ip_not_allowed');
        assert.match(
          refused.json().error.message,
          /"192\.168\.001\.010" is not an address as written and admits no address: replace it through the admin API/,
        );
      }
      assert.equal((await validate(key, '203.0.113.200')).statusCode, 200, 'the range, as before');
      const shown = await app.inject({ method: 'GET', url: `/admin/v1/keys/${id}`, headers: admin });
      assert.deepEqual(
        shown.json().data.ip_allowlist,
        ['192.168.001.010', '203.0.113.7/24'],
        'shown as stored',
      );
    });
  });
}
