import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { randomBase62 } from '../../src/lib/crypto.js';
import { adminCli as cli, adminCliJson as json, startAdminService } from '../helpers/admin-cli.js';
import { databaseTargets } from '../helpers/db.js';
import { freePort } from '../helpers/processes.js';
import { postgresName } from '../helpers/resources.js';

const ADMIN_KEY = `svc_admin_${randomBase62(32)}`;
const FUTURE = '2030-06-30T12:00:00.000Z';

type Key = Record<string, unknown> & { id: string; key: string; account_id: string };

/** The flags of every setting of a key, and the fields they make. */
const SETTINGS = [
  '--name',
  'checkout',
  '--expires-at',
  FUTURE,
  '--scopes',
  'validate,usage',
  '--ip-allowlist',
  '203.0.113.0/24,2001:db8::/32',
  '--rate-limit',
  '30',
  '--monthly-quota',
  '1000',
  '--metadata',
  'team=web',
  '--metadata',
  'note=a=b',
  '--default-requester-vat',
  'DE136695976',
];
const FIELDS = {
  name: 'checkout',
  expires_at: FUTURE,
  scopes: ['validate', 'usage'],
  ip_allowlist: ['203.0.113.0/24', '2001:db8::/32'],
  rate_limit_per_minute: 30,
  monthly_quota: 1000,
  metadata: { team: 'web', note: 'a=b' },
  default_requester_vat: 'DE136695976',
};

/**
 * Accounts and a key's whole life through the CLI, `target` being the flags (or nothing) and `env`
 * the environment that say where: the same commands and answers on every path.
 */
async function keyLifecycle(target: string[], env: Record<string, string>) {
  const account = await json<{ id: string; name: string }>(
    [
      'accounts',
      'create',
      '--name',
      'Acme GmbH',
      '--external-id',
      `acme-${randomBytes(3).toString('hex')}`,
      ...target,
    ],
    env,
  );
  assert.equal(account.name, 'Acme GmbH');
  const accounts = await json<{ id: string }[]>(['accounts', 'list', '--search', 'Acme', ...target], env);
  assert.ok(accounts.some((a) => a.id === account.id));

  const created = await json<Key>(
    ['keys', 'create', '--account', account.id, '--plan', 'pro', '--mode', 'live', ...SETTINGS, ...target],
    env,
  );
  assert.match(created.key, /^svc_live_[0-9A-Za-z]{32}$/);
  assert.equal(created.account_id, account.id);
  assert.deepEqual({ ...created, ...FIELDS }, created, 'every setting was stored');
  const byPrefix = await json<Key[]>(['keys', 'list', '--prefix', created.key.slice(0, 13), ...target], env);
  assert.deepEqual(
    byPrefix.map((k) => k.id),
    [created.id],
    'found by the prefix it shows (svc_live_…)',
  );

  const updated = await json<Key>(
    [
      'keys',
      'update',
      created.id,
      '--scopes',
      'all',
      '--rate-limit',
      'plan',
      '--expires-at',
      'never',
      ...target,
    ],
    env,
  );
  assert.equal(updated.scopes, null);
  assert.equal(updated.rate_limit_per_minute, null);
  assert.equal(updated.expires_at, null);
  assert.equal(updated.monthly_quota, 1000, 'what was not named is kept');

  const rolled = await json<Key>(['keys', 'roll', created.id, '--overlap-seconds', '3600', ...target], env);
  assert.notEqual(rolled.key, created.key);
  assert.equal(rolled.monthly_quota, 1000, 'the new key has the same settings');
  // An id written in capitals is the same id.
  const old = await json<Key>(['keys', 'show', created.id.toUpperCase(), ...target], env);
  assert.equal(old.rolled_to, rolled.id);
  assert.ok(old.expires_at !== null, 'the old key ends with the overlap');

  const revoke = await cli(['keys', 'revoke', rolled.id, ...target], env);
  assert.equal(revoke.code, 0, revoke.stderr);
  assert.equal(revoke.stdout, `Revoked ${rolled.id}.\n`);
  const again = await cli(['keys', 'revoke', rolled.id, ...target], env);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, new RegExp(`^Key ${rolled.id} was already revoked at \\d{4}-`));
  const revoked = await json<Key[]>(
    ['keys', 'list', '--account', account.id, '--status', 'revoked', ...target],
    env,
  );
  assert.deepEqual(
    revoked.map((k) => k.id),
    [rolled.id],
  );

  const disabled = await json<{ disabled: boolean }>(['accounts', 'disable', account.id, ...target], env);
  assert.equal(disabled.disabled, true);
  const enabled = await cli(['accounts', 'enable', account.id, ...target], env);
  assert.equal(enabled.code, 0, enabled.stderr);
  assert.equal(enabled.stdout, `Enabled account ${account.id}.\n`);
  const enabledAgain = await cli(['accounts', 'enable', account.id, ...target], env);
  assert.equal(enabledAgain.code, 0, enabledAgain.stderr);
  assert.equal(enabledAgain.stdout, `Account ${account.id} was already enabled.\n`);
  return { account, created, rolled };
}

describe('openvat accounts and openvat keys, against a running service and on its database', () => {
  let dir: string;
  let databaseUrl: string;
  let url: string;
  let stop: () => void;

  /** GET of the admin API with the admin key. */
  async function api<T>(path: string): Promise<T> {
    const res = await fetch(`${url}/admin/v1${path}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    assert.equal(res.status, 200, path);
    return ((await res.json()) as { data: T }).data;
  }

  before(async () => {
    ({ dir, databaseUrl, url, stop } = await startAdminService(ADMIN_KEY));
  });
  after(() => stop?.());

  it('--url and --admin-key: accounts and a key with every setting, shown by the API, updated, rolled, revoked', async () => {
    // No database at hand: everything goes through the service.
    const env = { DATABASE_URL: `sqlite:${join(dir, 'absent.db')}` };
    const { account, created, rolled } = await keyLifecycle(['--url', url, '--admin-key', ADMIN_KEY], env);
    const shown = await api<Key>(`/keys/${created.id}`);
    assert.equal(shown.rolled_to, rolled.id);
    assert.equal(shown.monthly_quota, 1000);
    assert.deepEqual(shown.ip_allowlist, FIELDS.ip_allowlist);
    const audit = await api<{ action: string; actor: { name: string } }[]>(
      `/audit-log?target_id=${account.id}`,
    );
    assert.deepEqual(
      audit.map((e) => e.action),
      ['account.update', 'account.update', 'account.create'],
    );
    assert.ok(
      audit.every((e) => e.actor.name === 'OPENVAT_ADMIN_KEY'),
      JSON.stringify(audit[0]?.actor),
    );
    assert.equal(existsSync(join(dir, 'absent.db')), false, 'the database of DATABASE_URL was not used');
  });

  it('OPENVAT_ADMIN_URL and OPENVAT_ADMIN_KEY do the same from the environment', async () => {
    const env = {
      DATABASE_URL: `sqlite:${join(dir, 'absent.db')}`,
      // The admin API's own address is taken as well as the service's.
      OPENVAT_ADMIN_URL: `${url}/admin/v1/`,
      OPENVAT_ADMIN_KEY: ADMIN_KEY,
    };
    const { created } = await keyLifecycle([], env);
    assert.equal((await api<Key>(`/keys/${created.id}`)).name, 'checkout');
    // The text output of the README's flow.
    const text = await cli(['keys', 'create', '--plan', 'business', '--name', 'Shop'], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      /^Created test key [0-9a-f-]{36} \(plan business, account [0-9a-f-]{36}\)\.\nThe key is shown only now; store it safely:\n {2}svc_test_[0-9A-Za-z]{32}\n$/,
    );
  });

  it('on DATABASE_URL (a shell on the server): the same commands, answers and audit log, the CLI the actor', async () => {
    const env = { DATABASE_URL: databaseUrl };
    const { account, created, rolled } = await keyLifecycle([], env);
    // What the CLI wrote on the database is what the running service shows.
    const shown = await api<Key>(`/keys/${created.id}`);
    assert.equal(shown.rolled_to, rolled.id);
    assert.deepEqual(shown.metadata, FIELDS.metadata);
    assert.equal((await api<Key>(`/keys/${rolled.id}`)).status, 'revoked');
    const audit = await api<{ action: string; actor: { id: string; name: string } }[]>(
      `/audit-log?target_id=${created.id}`,
    );
    assert.deepEqual(
      audit.map((e) => e.action),
      ['key.roll', 'key.update', 'key.create'],
    );
    for (const entry of audit) {
      assert.equal(entry.actor.id, '00000000-0000-0000-0000-000000000000');
      assert.match(entry.actor.name, /^cli \(.+@.+\)$/);
    }
    const accountAudit = await api<{ action: string }[]>(`/audit-log?target_id=${account.id}`);
    assert.equal(accountAudit.length, 3);

    // A read on the database calls the service function its route calls: the same records, to the
    // byte of the JSON the API answers.
    const reads: [string[], string][] = [
      [['keys', 'list', '--account', account.id], `/keys?account_id=${account.id}`],
      [['keys', 'show', created.id], `/keys/${created.id}`],
      [
        ['accounts', 'list', '--search', account.name ?? ''],
        `/accounts?q=${encodeURIComponent(account.name ?? '')}`,
      ],
      [['accounts', 'show', account.id], `/accounts/${account.id}`],
    ];
    for (const [args, path] of reads) {
      const read = await cli([...args, '--json'], env);
      assert.equal(read.code, 0, read.stderr);
      assert.equal(read.stdout, `${JSON.stringify(await api(path))}\n`, args.join(' '));
    }
  });

  it('refusals: the API message with a non-zero exit, a wrong key 401, an unreachable URL named, usage errors in one line', async () => {
    const remote = ['--url', url, '--admin-key', ADMIN_KEY];
    const local = { DATABASE_URL: databaseUrl };
    const before = (await api<unknown[]>('/keys?limit=200')).length;
    const missing = '01a22039-0000-7000-8000-000000000000';
    for (const [target, env] of [
      [remote, {}],
      [[], local],
    ] as const) {
      const unknownAccount = await cli(
        ['keys', 'create', '--plan', 'pro', '--account', missing, ...target],
        env,
      );
      assert.equal(unknownAccount.code, 2, unknownAccount.stderr);
      assert.equal(
        unknownAccount.stderr,
        `openvat: 400 invalid_format: account_id: no account has the id ${missing}.\n`,
      );
      const notFound = await cli(['keys', 'revoke', missing, ...target], env);
      assert.equal(notFound.code, 1, notFound.stderr);
      assert.equal(notFound.stderr, `openvat: 404 not_found: No key has the id ${missing}.\n`);
    }
    assert.equal((await api<unknown[]>('/keys?limit=200')).length, before, 'nothing was stored');

    const wrongKey = await cli(['keys', 'list', '--url', url, '--admin-key', `svc_admin_${'x'.repeat(32)}`]);
    assert.equal(wrongKey.code, 2, wrongKey.stderr);
    assert.equal(wrongKey.stderr, 'openvat: 401 unauthorized: The admin key is not valid.\n');
    const publicKey = await cli(['accounts', 'list'], {
      OPENVAT_ADMIN_URL: url,
      OPENVAT_ADMIN_KEY: `svc_test_${'x'.repeat(32)}`,
    });
    assert.equal(publicKey.code, 2, publicKey.stderr);
    assert.match(publicKey.stderr, /^openvat: 401 unauthorized: An API key is not accepted here/);

    const closed = `http://127.0.0.1:${await freePort()}`;
    const unreachable = await cli(['accounts', 'list', '--url', closed, '--admin-key', ADMIN_KEY]);
    assert.equal(unreachable.code, 1, unreachable.stderr);
    assert.equal(
      unreachable.stderr,
      `openvat: cannot reach ${closed} (connection refused); is the service running and --url right?\n`,
    );
    const noKey = await cli(['accounts', 'list', '--url', url]);
    assert.equal(noKey.code, 2);
    assert.equal(noKey.stderr, 'openvat: --url needs --admin-key or OPENVAT_ADMIN_KEY\n');
    const keyAlone = await cli(['keys', 'list', '--admin-key', ADMIN_KEY], local);
    assert.equal(keyAlone.code, 2);
    assert.match(keyAlone.stderr, /^openvat: --admin-key needs --url \(or OPENVAT_ADMIN_URL\)/);

    const usage: [string[], RegExp][] = [
      [['accounts', 'lst'], /^openvat: unknown command 'lst'\. Did you mean list\?$/],
      [
        ['keys', 'update', missing, '--rate-limt', '5'],
        /^openvat: unknown option '--rate-limt'\. Did you mean --rate-limit\?$/,
      ],
      [
        ['keys', 'create', '--plan', 'pro', '--scopes', 'validate,frobnicate'],
        /"frobnicate" is not a scope; scopes: validate, /,
      ],
      [
        ['keys', 'create', '--plan', 'pro', '--ip-allowlist', '10.0.0.0/33'],
        /"10\.0\.0\.0\/33": the prefix length must be a whole number from 0 to 32/,
      ],
      [
        ['keys', 'create', '--plan', 'pro', '--ip-allowlist', '203.0.113.0/24,192.168.001.010'],
        /"192\.168\.001\.010" is not an IPv4 address as written/,
      ],
      [['keys', 'create', '--plan', 'pro', '--expires-at', '2020-01-01'], /2020-01-01 is in the past/],
      [['keys', 'create', '--plan', 'gold'], /argument 'gold' is invalid\. Allowed choices are /],
      [
        ['keys', 'create', '--plan', 'pro', '--rate-limit', '0'],
        /a whole number from 1 to 100000000, or plan/,
      ],
      [['keys', 'create', '--plan', 'pro', '--metadata', 'novalue'], /expected key=value/],
      [['keys', 'roll', missing], /required option '--overlap-seconds <n>' not specified/],
      [['keys', 'roll', missing, '--overlap-seconds', '604801'], /from 0 to 604800 \(7 days\)/],
      [['keys', 'update', missing], /^openvat: nothing to change: give --name, /],
      [['accounts', 'create'], /required option '--name <name>' not specified/],
      [
        ['keys', 'show', 'nope'],
        /value 'nope' is invalid for argument 'id'\. not an id \(a UUID, as list shows them\)/,
      ],
      [['accounts', 'show', `${missing}x`], /is invalid for argument 'id'\. not an id \(a UUID/],
      [['keys', 'list', '--account', 'nope'], /argument 'nope' is invalid\. not an id/],
      [['keys', 'list', '--prefix', 'x'.repeat(33)], /at most 32 characters \(got 33\)/],
      [['accounts', 'list', '--search', 'x'.repeat(201)], /at most 200 characters \(got 201\)/],
    ];
    for (const [args, message] of usage) {
      const res = await cli(args, local);
      assert.equal(res.code, 2, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr.trimEnd(), message, args.join(' '));
      assert.equal(res.stderr.trimEnd().split('\n').length, 1, `one line: ${res.stderr}`);
    }
    assert.equal((await api<unknown[]>('/keys?limit=200')).length, before, 'nothing was stored');
  });
});

describe('openvat keys on a PostgreSQL DATABASE_URL', async () => {
  const target = (await databaseTargets()).find((t) => t.name === 'postgres');
  const schema = postgresName('cli');
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  let env: Record<string, string>;

  before(async () => {
    if (target?.skip !== false) return;
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    const url = new URL(process.env.TEST_DATABASE_URL as string);
    url.searchParams.set('options', `-c search_path=${schema}`);
    env = { DATABASE_URL: url.toString() };
    const migrated = await cli(['migrate'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
  });
  after(async () => {
    if (target?.skip !== false) return;
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });

  it('runs the same commands through the same routes, recorded in the audit log', {
    skip: target?.skip ?? 'no PostgreSQL',
  }, async () => {
    const { created } = await keyLifecycle([], env);
    const audit = await client.query<{ action: string; actor_name: string }>(
      `SELECT action, actor_name FROM ${schema}.admin_audit_log WHERE target_id = $1 ORDER BY id`,
      [created.id],
    );
    assert.deepEqual(
      audit.rows.map((r) => r.action),
      ['key.create', 'key.update', 'key.roll'],
    );
    assert.ok(audit.rows.every((r) => r.actor_name.startsWith('cli (')));
  });
});
