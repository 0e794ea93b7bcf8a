import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomBase62 } from '../../src/lib/crypto.js';
import { adminCli as cli, adminCliJson as json, startAdminService } from '../helpers/admin-cli.js';

const ADMIN_KEY = `svc_admin_${randomBase62(32)}`;

type Key = Record<string, unknown> & { id: string; key: string };

describe("openvat keys and accounts: the admin API's limits, through the API and on its database", () => {
  let databaseUrl: string;
  let url: string;
  let stop: () => void;

  before(async () => {
    ({ databaseUrl, url, stop } = await startAdminService(ADMIN_KEY));
  });
  after(() => stop?.());

  it("the admin API's limits: at the limit stored alike through the API and on the database, one over refused by the flags", async () => {
    const text = (n: number) => 'a'.repeat(n);
    const pairs = (n: number) => Array.from({ length: n }, (_, i) => ['--metadata', `k${i}=v`]).flat();
    const addresses = (n: number) =>
      Array.from({ length: n }, (_, i) => `10.0.${Math.floor(i / 256)}.${i % 256}`).join(',');
    const atLimit = [
      ...['--name', text(200), '--ip-allowlist', addresses(100)],
      ...['--scopes', Array(30).fill('validate').join(','), ...pairs(48)],
      ...['--metadata', `${text(100)}=v`, '--metadata', `k=${text(1000)}`],
    ];
    const over: [string[], RegExp][] = [
      [['keys', 'create', '--plan', 'pro', '--name', text(201)], /at most 200 characters \(got 201\)/],
      [
        ['keys', 'create', '--plan', 'pro', '--metadata', `${text(101)}=v`],
        /a key of at most 100 characters/,
      ],
      [
        ['keys', 'create', '--plan', 'pro', '--metadata', `k=${text(1001)}`],
        /argument 'k=a{38}…' \(1,003 characters\) is invalid\. a value of at most 1000 characters/,
      ],
      [['keys', 'create', '--plan', 'pro', ...pairs(51)], /at most 50 pairs/],
      [
        ['keys', 'create', '--plan', 'pro', '--ip-allowlist', addresses(101)],
        /at most 100 addresses or CIDRs \(got 101\)/,
      ],
      [['accounts', 'create', '--name', text(201)], /at most 200 characters/],
      [['accounts', 'create', '--name', ''], /must not be empty/],
      [['accounts', 'create', '--name', 'a', '--external-id', text(201)], /at most 200 characters/],
    ];
    for (const [target, env] of [
      [['--url', url, '--admin-key', ADMIN_KEY], {}],
      [[], { DATABASE_URL: databaseUrl }],
    ] as const) {
      const key = await json<Key>(['keys', 'create', '--plan', 'pro', ...atLimit, ...target], env);
      assert.equal(key.name, text(200));
      assert.equal((key.ip_allowlist as string[]).length, 100);
      assert.deepEqual(key.scopes, ['validate'], 'a scope named twice is one scope');
      assert.equal(Object.keys(key.metadata as object).length, 50);
      const account = await json<{ name: string; external_id: string }>(
        ['accounts', 'create', '--name', text(200), '--external-id', text(200), ...target],
        env,
      );
      assert.equal(account.external_id, text(200));
      for (const [args, message] of over) {
        const res = await cli([...args, ...target], env);
        assert.equal(res.code, 2, `${args.join(' ').slice(0, 80)}: ${res.stderr}`);
        assert.match(res.stderr, message);
        assert.ok(res.stderr.length < 400, `a long value is not repeated whole: ${res.stderr.length} bytes`);
      }
    }
  });
});
