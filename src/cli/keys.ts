import { Command, InvalidArgumentError, Option } from 'commander';
import type { Config } from '../config.js';
import { OFFICIAL_TEST_REQUESTER } from '../modules/confirmations/request.js';
import type { KeyRecord, KeySettings, Mode, Plan } from '../modules/keys/index.js';
import { MODES, PLANS } from '../modules/keys/index.js';
import { compactInput, parseVatNumber } from '../modules/vat-numbers/index.js';
import { AdminApiError, type KeyFilter, type KeyWithSecret } from './admin-api.js';
import {
  apiValue,
  atMost,
  CLEAR,
  type Clear,
  collectMetadata,
  defined,
  LIMITS,
  parseAllowlist,
  parseExpiresAt,
  parseId,
  parseOverlap,
  parseScopes,
  type TargetOptions,
  wholeNumberOrPlan,
  withAdmin,
  withTarget,
} from './admin-flags.js';
import { UsageError } from './usage-error.js';

/**
 * The requester must be a German VAT number, checked like any VAT number (format and check digit),
 * or the authority's test requester, which `POST /v1/confirm` accepts too (its check digit is wrong on
 * purpose).
 */
export function parseRequesterVat(input: string): string {
  if (compactInput(input) === OFFICIAL_TEST_REQUESTER) return OFFICIAL_TEST_REQUESTER;
  const parsed = parseVatNumber(input);
  if (!parsed.ok) throw new InvalidArgumentError(parsed.message);
  if (parsed.country !== 'DE') {
    throw new InvalidArgumentError(
      `${parsed.normalised} is not a German VAT number (DE followed by 9 digits).`,
    );
  }
  return parsed.normalised;
}

/** The settings flags of `keys create` and `keys update`, as Commander hands them over. */
interface SettingFlags {
  name?: string;
  defaultRequesterVat?: string | Clear;
  expiresAt?: string | Clear;
  scopes?: string[] | Clear;
  ipAllowlist?: string[] | Clear;
  rateLimit?: number | Clear;
  monthlyQuota?: number | Clear;
  metadata?: Record<string, string>;
}

/** The API's fields of the flags given (a flag not given is not sent). */
function settings(flags: SettingFlags): KeySettings {
  const fields: [string, unknown][] = [
    ['name', flags.name === '' ? CLEAR : flags.name],
    ['default_requester_vat', flags.defaultRequesterVat],
    ['expires_at', flags.expiresAt],
    ['scopes', flags.scopes],
    ['ip_allowlist', flags.ipAllowlist],
    ['rate_limit_per_minute', flags.rateLimit],
    ['monthly_quota', flags.monthlyQuota],
    ['metadata', flags.metadata],
  ];
  return Object.fromEntries(
    fields.filter(([, value]) => value !== undefined).map(([field, value]) => [field, apiValue(value)]),
  ) as KeySettings;
}

/** Adds the flags of a key's settings; `update` accepts the words that clear one. */
function withSettings(command: Command, update: boolean): Command {
  const clear = (word: string) => (update ? `; ${word} removes it` : '');
  return command
    .option(
      '--name <name>',
      update
        ? 'name of the key ("" removes it)'
        : 'name of the key (and of its new account without --account)',
      atMost(LIMITS.name),
    )
    .option(
      '--default-requester-vat <vat>',
      `German VAT number used as requester when a call names none${clear('none')}`,
      (value: string) => (update && value.trim() === 'none' ? CLEAR : parseRequesterVat(value)),
    )
    .option(
      '--expires-at <time>',
      `when the key stops working (ISO 8601, in the future)${clear('never')}`,
      parseExpiresAt,
    )
    .option(
      '--scopes <list>',
      'operations the key may call, comma-separated (validate, validate_batch, decide, confirm, audits, webhooks, monitors, usage, peppol, eori); all: every one its plan allows',
      parseScopes,
    )
    .option(
      '--ip-allowlist <cidrs>',
      'addresses or CIDRs the key may be used from, comma-separated (IPv4 and IPv6); any: every address',
      parseAllowlist,
    )
    .option(
      '--rate-limit <n>',
      "requests per minute (1–100000000); plan: the plan's",
      wholeNumberOrPlan(1, 100_000_000),
    )
    .option(
      '--monthly-quota <n>',
      "calls per calendar month, UTC (0–1000000000000); plan: the plan's default",
      wholeNumberOrPlan(0, 1_000_000_000_000),
    )
    .option(
      '--metadata <key=value>',
      'your own key=value pairs (repeatable); replaces the metadata',
      collectMetadata,
    );
}

const state = (k: KeyRecord): string => {
  if (k.status === 'revoked') return `revoked ${k.revoked_at}`;
  if (k.status === 'expired') return `expired ${k.expires_at}`;
  return k.expires_at ? `active until ${k.expires_at}` : 'active';
};

function printKey(k: KeyRecord, json: boolean | undefined): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(k)}\n`);
    return;
  }
  const show = (value: unknown) =>
    value === null ? '-' : typeof value === 'string' ? value : JSON.stringify(value);
  const rows: [string, unknown][] = [
    ['id', k.id],
    ['account', k.account_id],
    ['name', k.name],
    ['prefix', `${k.prefix}…`],
    ['plan', k.plan],
    ['mode', k.mode],
    ['status', state(k)],
    ['requester', k.default_requester_vat],
    ['expires at', k.expires_at],
    ['scopes', k.scopes === null ? 'all its plan allows' : k.scopes.join(',')],
    ['ip allowlist', k.ip_allowlist === null ? 'any' : k.ip_allowlist.join(',')],
    ['rate limit', k.rate_limit_per_minute === null ? "the plan's" : `${k.rate_limit_per_minute}/min`],
    ['monthly quota', k.monthly_quota === null ? "the plan's" : k.monthly_quota],
    ['used this month', k.usage_this_month],
    ['metadata', k.metadata],
    ['created', k.created_at],
    ['last used', k.last_used_at],
    ['rolled to', k.rolled_to],
  ];
  for (const [label, value] of rows) console.log(`${label.padEnd(16)}${show(value)}`);
}

function printSecret(created: KeyWithSecret, json: boolean | undefined, first: string): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(created)}\n`);
    return;
  }
  console.log(first);
  console.log('The key is shown only now; store it safely:');
  console.log(`  ${created.key}`);
}

/**
 * `openvat keys create|list|show|update|revoke|roll`: API keys, on DATABASE_URL (a shell on the
 * server) or with `--url` through the admin API of a running service (any machine).
 */
export function createKeysCommands(config: () => Config): Command {
  const keys = new Command('keys').description(
    'create, list, show, change, revoke and roll API keys (on DATABASE_URL, or with --url through the admin API)',
  );

  withTarget(
    withSettings(
      keys
        .command('create')
        .description('create an API key (shown once)')
        .addOption(new Option('--plan <plan>', 'plan of the key').choices([...PLANS]).makeOptionMandatory())
        .addOption(
          new Option('--mode <mode>', 'live registries or test mode').choices([...MODES]).default('test'),
        )
        .option(
          '--account <id>',
          'add the key to an existing account (default: a new account, named by --name)',
          parseId,
        ),
      false,
    ).option('--json', 'print the key as JSON: {id, key, plan, mode, account_id, …} (snake_case)'),
  ).action(
    async (
      options: SettingFlags &
        TargetOptions & { plan: string; mode: string; account?: string; json?: boolean },
    ) => {
      const created = await withAdmin(options, config, async (admin) => {
        let accountId = options.account;
        if (accountId === undefined) {
          accountId = (await admin.createAccount({ name: options.name || 'unnamed' })).id;
        }
        try {
          return await admin.createKey({
            account_id: accountId,
            plan: options.plan as Plan,
            mode: options.mode as Mode,
            ...settings(options),
          });
        } catch (error) {
          if (options.account === undefined && error instanceof AdminApiError)
            error.message += ` (account ${accountId} was created, without a key; add one with --account ${accountId})`;
          throw error;
        }
      });
      printSecret(
        created,
        options.json,
        `Created ${created.mode} key ${created.id} (plan ${created.plan}, account ${created.account_id}).`,
      );
    },
  );

  withTarget(
    keys
      .command('list')
      .description('list keys (never the keys themselves)')
      .option('--account <id>', 'keys of this account', parseId)
      .addOption(new Option('--plan <plan>', 'keys of this plan').choices([...PLANS]))
      .addOption(new Option('--mode <mode>', 'keys of this mode').choices([...MODES]))
      .addOption(
        new Option('--status <status>', 'keys in this state').choices(['active', 'expired', 'revoked']),
      )
      .option(
        '--prefix <prefix>',
        'keys whose key starts with this (e.g. svc_live_3kQ9)',
        atMost(LIMITS.prefix),
      )
      .option(
        '--json',
        'print a JSON array of keys {id, account_id, prefix, plan, mode, status, …} (snake_case)',
      ),
  ).action(
    async (
      options: {
        account?: string;
        plan?: string;
        mode?: string;
        status?: KeyFilter['status'];
        prefix?: string;
        json?: boolean;
      } & TargetOptions,
    ) => {
      const list = await withAdmin(options, config, (admin) =>
        admin.listKeys(
          defined({
            account_id: options.account,
            plan: options.plan,
            mode: options.mode,
            status: options.status,
            prefix: options.prefix,
          }),
        ),
      );
      if (options.json) {
        process.stdout.write(`${JSON.stringify(list)}\n`);
        return;
      }
      if (list.length === 0) {
        console.log('No keys.');
        return;
      }
      for (const k of list) {
        const requester = k.default_requester_vat ? ` requester ${k.default_requester_vat}` : '';
        const name = k.name ? `  ${k.name}` : '';
        console.log(
          `${k.id}  ${k.prefix}…  ${k.mode.padEnd(4)}  ${k.plan.padEnd(8)}  ${state(k)}  account ${k.account_id}${requester}${name}`,
        );
      }
    },
  );

  withTarget(
    keys
      .command('show')
      .description('show a key (never the key itself)')
      .argument('<id>', 'key id (from keys list)', parseId)
      .option('--json', 'print the key as JSON'),
  ).action(async (id: string, options: { json?: boolean } & TargetOptions) => {
    const key = await withAdmin(options, config, (admin) => admin.getKey(id));
    printKey(key, options.json);
  });

  withTarget(
    withSettings(
      keys
        .command('update')
        .description("change a key's settings")
        .argument('<id>', 'key id (from keys list)', parseId),
      true,
    ).option('--json', 'print the key as JSON'),
  ).action(async (id: string, options: SettingFlags & TargetOptions & { json?: boolean }) => {
    const body = settings(options);
    if (Object.keys(body).length === 0)
      throw new UsageError(
        'nothing to change: give --name, --default-requester-vat, --expires-at, --scopes, --ip-allowlist, --rate-limit, --monthly-quota or --metadata',
      );
    const key = await withAdmin(options, config, (admin) => admin.updateKey(id, body));
    if (options.json) return printKey(key, true);
    console.log(`Updated ${id}.`);
  });

  withTarget(
    keys
      .command('revoke')
      .description('revoke a key by id (at once on every instance that is told: see docs/operators.md)')
      .argument('<id>', 'key id (from keys list)', parseId)
      .option('--json', 'print the key as JSON'),
  ).action(async (id: string, options: { json?: boolean } & TargetOptions) => {
    const { key, already } = await withAdmin(options, config, async (admin) => {
      const before = await admin.getKey(id);
      if (before.status === 'revoked') return { key: before, already: true };
      return { key: await admin.revokeKey(id), already: false };
    });
    if (options.json) return printKey(key, true);
    console.log(already ? `Key ${id} was already revoked at ${key.revoked_at}.` : `Revoked ${id}.`);
  });

  withTarget(
    keys
      .command('roll')
      .description('a new key with the same settings; the old one keeps working until the overlap ends')
      .argument('<id>', 'key id (from keys list)', parseId)
      .requiredOption(
        '--overlap-seconds <n>',
        'how long the old key keeps working (0 to 604800, 7 days)',
        parseOverlap,
      )
      .option('--json', 'print the new key as JSON: {id, key, …}'),
  ).action(async (id: string, options: { overlapSeconds: number; json?: boolean } & TargetOptions) => {
    const { rolled, old } = await withAdmin(options, config, async (admin) => {
      const rolled = await admin.rollKey(id, options.overlapSeconds);
      return { rolled, old: await admin.getKey(id) };
    });
    printSecret(
      rolled,
      options.json,
      `Rolled ${id} to ${rolled.id}; the old key works until ${old.expires_at}.`,
    );
  });

  return keys;
}
