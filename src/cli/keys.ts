import { Command, InvalidArgumentError, Option } from 'commander';
import type { Config } from '../config.js';
import { systemClock } from '../lib/clock.js';
import { createIdGenerator } from '../lib/ids.js';
import { OFFICIAL_TEST_REQUESTER } from '../modules/confirmations/service.js';
import { isMode, isPlan, MODES, type Mode, PLANS, type Plan } from '../modules/keys/plans.js';
import { createKeysRepository } from '../modules/keys/repository.js';
import { createKeysService, type KeySummary } from '../modules/keys/service.js';
import { compactInput, parseVatNumber } from '../modules/vat-numbers/index.js';
import { openExistingDatabase } from './database.js';

async function withKeys<T>(config: Config, run: (keys: ReturnType<typeof createKeysService>) => Promise<T>) {
  const db = openExistingDatabase(config.databaseUrl);
  try {
    await db.migrate();
    const keys = createKeysService({
      db: db.kysely,
      repository: createKeysRepository(db.kysely),
      clock: systemClock,
      ids: createIdGenerator(),
    });
    return await run(keys);
  } finally {
    await db.close();
  }
}

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

/** The JSON form of a key in `keys list --json` (snake_case, as every --json output and the API). */
function keyJson(k: KeySummary) {
  return {
    id: k.id,
    account_id: k.accountId,
    prefix: k.prefix,
    plan: k.plan,
    mode: k.mode,
    default_requester_vat: k.defaultRequesterVat,
    created_at: k.createdAt,
    revoked_at: k.revokedAt,
  };
}

/** `openvat keys create|list|revoke`: the operator's key management, on the same DATABASE_URL as the server. */
export function createKeysCommands(config: () => Config): Command {
  const keys = new Command('keys').description('create, list and revoke API keys');

  keys
    .command('create')
    .description('create an API key (shown once)')
    .addOption(new Option('--plan <plan>', 'plan of the key').choices([...PLANS]).makeOptionMandatory())
    .addOption(
      new Option('--mode <mode>', 'live registries or test mode').choices([...MODES]).default('test'),
    )
    .option(
      '--default-requester-vat <vat>',
      'German VAT number used as requester when a call names none',
      parseRequesterVat,
    )
    .option('--account <id>', 'add the key to an existing account instead of creating one')
    .option('--name <name>', 'name of the new account')
    .option('--json', 'print one JSON object {id, key, plan, mode, account_id} on stdout')
    .action(
      async (options: {
        plan: string;
        mode: string;
        defaultRequesterVat?: string;
        account?: string;
        name?: string;
        json?: boolean;
      }) => {
        if (!isPlan(options.plan) || !isMode(options.mode)) throw new Error('invalid plan or mode');
        const plan: Plan = options.plan;
        const mode: Mode = options.mode;
        const created = await withKeys(config(), (service) =>
          service.createKey({
            plan,
            mode,
            defaultRequesterVat: options.defaultRequesterVat ?? null,
            ...(options.account ? { accountId: options.account } : {}),
            accountName: options.name ?? null,
          }),
        );
        if (options.json) {
          process.stdout.write(
            `${JSON.stringify({ id: created.id, key: created.key, plan: created.plan, mode: created.mode, account_id: created.accountId })}\n`,
          );
          return;
        }
        console.log(
          `Created ${created.mode} key ${created.id} (plan ${created.plan}, account ${created.accountId}).`,
        );
        console.log('The key is shown only now; store it safely:');
        console.log(`  ${created.key}`);
      },
    );

  keys
    .command('list')
    .description('list keys (never the keys themselves)')
    .option('--json', 'print a JSON array of {id, account_id, prefix, plan, mode, ...} (snake_case)')
    .action(async (options: { json?: boolean }) => {
      const list = await withKeys(config(), (service) => service.listKeys());
      if (options.json) {
        process.stdout.write(`${JSON.stringify(list.map(keyJson))}\n`);
        return;
      }
      if (list.length === 0) {
        console.log('No keys.');
        return;
      }
      for (const k of list) {
        const state = k.revokedAt ? `revoked ${k.revokedAt}` : 'active';
        const requester = k.defaultRequesterVat ? ` requester ${k.defaultRequesterVat}` : '';
        console.log(
          `${k.id}  ${k.prefix}…  ${k.mode.padEnd(4)}  ${k.plan.padEnd(8)}  ${state}  account ${k.accountId}${requester}`,
        );
      }
    });

  keys
    .command('revoke')
    .description('revoke a key by id')
    .argument('<id>', 'key id (from keys list)')
    .action(async (id: string) => {
      const done = await withKeys(config(), (service) => service.revokeKey(id));
      if (!done) {
        console.error(`openvat: no active key with id ${id}`);
        process.exit(1);
      }
      console.log(`Revoked ${id}.`);
    });

  return keys;
}
