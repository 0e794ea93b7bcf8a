import { Command } from 'commander';
import type { Config } from '../config.js';
import type { AccountRecord } from '../modules/keys/index.js';
import {
  atMost,
  collectMetadata,
  defined,
  LIMITS,
  parseId,
  type TargetOptions,
  withAdmin,
  withTarget,
} from './admin-flags.js';
import { UsageError } from './usage-error.js';

interface AccountFields {
  name?: string;
  externalId?: string;
  metadata?: Record<string, string>;
  json?: boolean;
}

const fields = (options: AccountFields) => ({
  ...(options.name !== undefined ? { name: options.name } : {}),
  ...(options.externalId !== undefined
    ? { external_id: options.externalId === '' ? null : options.externalId }
    : {}),
  ...(options.metadata !== undefined ? { metadata: options.metadata } : {}),
});

function printAccount(account: AccountRecord, json: boolean | undefined): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(account)}\n`);
    return;
  }
  console.log(`id           ${account.id}`);
  console.log(`name         ${account.name ?? '-'}`);
  console.log(`external id  ${account.external_id ?? '-'}`);
  console.log(`status       ${account.disabled ? 'disabled' : 'active'}`);
  console.log(`metadata     ${JSON.stringify(account.metadata)}`);
  console.log(`created      ${account.created_at}`);
  if (account.updated_at) console.log(`updated      ${account.updated_at}`);
}

/**
 * `openvat accounts create|list|show|update|disable|enable`: accounts (tenants) through the admin API
 * (`--url`), or on DATABASE_URL.
 */
export function createAccountsCommands(config: () => Config): Command {
  const accounts = new Command('accounts').description(
    'create, list, show, change, disable and enable accounts (on DATABASE_URL, or with --url through the admin API)',
  );
  const metadataHelp = 'key=value (repeatable); replaces the metadata';

  withTarget(
    accounts
      .command('create')
      .description('create an account')
      .requiredOption('--name <name>', 'name of the account', atMost(LIMITS.name, { notEmpty: true }))
      .option('--external-id <id>', 'your own id of the account', atMost(LIMITS.externalId))
      .option('--metadata <key=value>', metadataHelp, collectMetadata)
      .option('--json', 'print the account as JSON'),
  ).action(async (options: AccountFields & TargetOptions) => {
    // --name is a required option: Commander stops the command without it.
    const account = await withAdmin(options, config, (admin) =>
      admin.createAccount({ ...fields(options), name: options.name ?? '' }),
    );
    if (options.json) return printAccount(account, true);
    console.log(`Created account ${account.id} (${account.name}).`);
  });

  withTarget(
    accounts
      .command('list')
      .description('list accounts')
      .option('--search <text>', 'part of the name or external id', atMost(LIMITS.search))
      .option('--external-id <id>', 'this external id exactly', atMost(LIMITS.externalId))
      .option('--json', 'print a JSON array of accounts'),
  ).action(async (options: { search?: string; externalId?: string; json?: boolean } & TargetOptions) => {
    const list = await withAdmin(options, config, (admin) =>
      admin.listAccounts(defined({ q: options.search, external_id: options.externalId })),
    );
    if (options.json) {
      process.stdout.write(`${JSON.stringify(list)}\n`);
      return;
    }
    if (list.length === 0) {
      console.log('No accounts.');
      return;
    }
    for (const a of list) {
      const external = a.external_id ? `  external ${a.external_id}` : '';
      console.log(`${a.id}  ${a.disabled ? 'disabled' : 'active  '}  ${a.name ?? '-'}${external}`);
    }
  });

  withTarget(
    accounts
      .command('show')
      .description('show an account')
      .argument('<id>', 'account id', parseId)
      .option('--json', 'print the account as JSON'),
  ).action(async (id: string, options: { json?: boolean } & TargetOptions) => {
    const account = await withAdmin(options, config, (admin) => admin.getAccount(id));
    printAccount(account, options.json);
  });

  withTarget(
    accounts
      .command('update')
      .description('change an account')
      .argument('<id>', 'account id', parseId)
      .option('--name <name>', 'name of the account', atMost(LIMITS.name, { notEmpty: true }))
      .option('--external-id <id>', 'your own id of the account ("" removes it)', atMost(LIMITS.externalId))
      .option('--metadata <key=value>', metadataHelp, collectMetadata)
      .option('--json', 'print the account as JSON'),
  ).action(async (id: string, options: AccountFields & TargetOptions) => {
    const body = fields(options);
    if (Object.keys(body).length === 0)
      throw new UsageError('nothing to change: give --name, --external-id or --metadata');
    const account = await withAdmin(options, config, (admin) => admin.updateAccount(id, body));
    if (options.json) return printAccount(account, true);
    console.log(`Updated account ${account.id}.`);
  });

  for (const [name, disabled, what] of [
    ['disable', true, 'disable an account: every key of it is refused at once'],
    ['enable', false, 'enable a disabled account again'],
  ] as const) {
    withTarget(
      accounts
        .command(name)
        .description(what)
        .argument('<id>', 'account id', parseId)
        .option('--json', 'print the account as JSON'),
    ).action(async (id: string, options: { json?: boolean } & TargetOptions) => {
      // Like `keys revoke`: an account already so is said so, and nothing is written or audited.
      const { account, already } = await withAdmin(options, config, async (admin) => {
        const before = await admin.getAccount(id);
        if (before.disabled === disabled) return { account: before, already: true };
        return { account: await admin.updateAccount(id, { disabled }), already: false };
      });
      if (options.json) return printAccount(account, true);
      const state = disabled ? 'disabled' : 'enabled';
      console.log(
        already
          ? `Account ${account.id} was already ${state}.`
          : `${disabled ? 'Disabled' : 'Enabled'} account ${account.id}.`,
      );
    });
  }

  return accounts;
}
