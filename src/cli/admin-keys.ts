import { Command, Option } from 'commander';
import type { Config } from '../config.js';
import { systemClock } from '../lib/clock.js';
import { createIdGenerator } from '../lib/ids.js';
import { createAdminRepository } from '../modules/admin/repository.js';
import { ADMIN_ROLES, type AdminRole, createAdminService } from '../modules/admin/service.js';
import { cliActor } from './cli-actor.js';
import { openExistingDatabase } from './database.js';

async function withAdmin<T>(
  config: Config,
  run: (admin: ReturnType<typeof createAdminService>) => Promise<T>,
) {
  const db = openExistingDatabase(config.databaseUrl);
  try {
    await db.migrate();
    return await run(
      createAdminService({
        repository: createAdminRepository(db.kysely),
        clock: systemClock,
        ids: createIdGenerator(),
        auditRetentionDays: config.admin.auditRetentionDays,
      }),
    );
  } finally {
    await db.close();
  }
}

/**
 * `openvat admin-keys create|list|revoke`: the operators' keys of the admin API, on DATABASE_URL;
 * creations and revocations are recorded in the admin audit log with the CLI as the actor.
 */
export function createAdminKeysCommands(config: () => Config): Command {
  const command = new Command('admin-keys').description('create, list and revoke admin keys (svc_admin_…)');

  command
    .command('create')
    .description('create an admin key (shown once)')
    .requiredOption('--name <name>', 'who or what uses the key')
    .addOption(
      new Option('--role <role>', 'admin: everything; read: read only')
        .choices([...ADMIN_ROLES])
        .default('admin'),
    )
    .option('--json', 'print one JSON object {id, key, name, role} on stdout')
    .action(async (options: { name: string; role: string; json?: boolean }) => {
      const role = options.role as AdminRole;
      const created = await withAdmin(config(), (admin) => admin.createKey(options.name, role, cliActor()));
      if (options.json) {
        process.stdout.write(
          `${JSON.stringify({ id: created.summary.id, key: created.key, name: created.summary.name, role })}\n`,
        );
        return;
      }
      console.log(`Created ${role} key ${created.summary.id} (${created.summary.name}).`);
      console.log('The key is shown only now; store it safely:');
      console.log(`  ${created.key}`);
    });

  command
    .command('list')
    .description('list admin keys (never the keys themselves)')
    .option('--json', 'print a JSON array of {id, name, role, prefix, created_at, revoked_at}')
    .action(async (options: { json?: boolean }) => {
      const list = await withAdmin(config(), (admin) => admin.listKeys());
      if (options.json) {
        process.stdout.write(`${JSON.stringify(list)}\n`);
        return;
      }
      if (list.length === 0) {
        console.log('No admin keys.');
        return;
      }
      for (const k of list) {
        const state = k.revoked_at ? `revoked ${k.revoked_at}` : 'active';
        console.log(`${k.id}  ${k.prefix}…  ${k.role.padEnd(5)}  ${state}  ${k.name}`);
      }
    });

  command
    .command('revoke')
    .description('revoke an admin key by id (at once, on every instance)')
    .argument('<id>', 'admin key id (from admin-keys list)')
    .action(async (id: string) => {
      const revoked = await withAdmin(config(), (admin) => admin.revokeKey(id, cliActor()));
      if (revoked.kind === 'refused') {
        console.error(`openvat: no active admin key with id ${id}`);
        process.exit(1);
      }
      console.log(`Revoked ${id}.`);
    });

  return command;
}
