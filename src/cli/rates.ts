import { Command } from 'commander';
import type { Config } from '../config.js';
import type { RateChangeView } from '../modules/rates/updates.js';
import { cliActor } from './cli-actor.js';
import { counted } from './counts.js';
import { withQuietContainer } from './quiet-container.js';
import { UsageError } from './usage-error.js';

function ratesText(change: RateChangeView): string {
  const r = change.rates;
  if (!r) return 'no rates (the country would disappear)';
  const parts = [`standard ${r.standard_rate}%`];
  if (r.reduced_rates.length > 0) parts.push(`reduced ${r.reduced_rates.join('/')}%`);
  if (r.super_reduced_rate !== null) parts.push(`super-reduced ${r.super_reduced_rate}%`);
  if (r.parking_rate !== null) parts.push(`parking ${r.parking_rate}%`);
  return parts.join(', ');
}

/** `openvat rates …`: the rates sync and decisions on the changes it held, on DATABASE_URL. */
export function createRatesCommands(config: () => Config): Command {
  const command = new Command('rates').description(
    'the rates sync with TEDB and the changes it held for an operator (see docs/rates.md)',
  );

  command
    .command('sync')
    .description(
      "ask TEDB for the member states' rates now (today through a year ahead) and keep what changed",
    )
    .action(() =>
      withQuietContainer(config, async (container) => {
        if (!container.config.tedbUrl) throw new UsageError('the rates sync is off (OPENVAT_TEDB_URL=off)');
        const outcome = await container.ratesUpdates.syncNow();
        if (outcome.kind === 'failed') {
          console.error(`openvat: the rates sync changed nothing: ${outcome.message}`);
          process.exitCode = 1;
          return;
        }
        console.log(
          `rates synced: ${counted(outcome.applied, 'change', 'changes')} applied, ${outcome.held} held, ${outcome.retired} withdrawn or superseded`,
        );
        if (outcome.held > 0) console.log("held changes wait for 'openvat rates held'");
      }),
    );

  command
    .command('held')
    .description('print the changes held for an operator, one a line: id, country, from, rates, why')
    .action(() =>
      withQuietContainer(config, async (container) => {
        const held = await container.ratesUpdates.changes(['held']);
        for (const change of held) {
          console.log(
            [change.id, change.country_code, change.valid_from, ratesText(change), change.reason ?? ''].join(
              '\t',
            ),
          );
        }
        console.error(counted(held.length, 'held change', 'held changes'));
      }),
    );

  for (const decision of ['accept', 'reject'] as const) addDecisionCommand(command, decision, config);

  return command;
}

/** `openvat rates accept|reject <id>`: an operator's decision on a held change. */
function addDecisionCommand(command: Command, decision: 'accept' | 'reject', config: () => Config): void {
  command
    .command(`${decision} <id>`)
    .description(
      decision === 'accept'
        ? 'release a held change: every instance serves it within a minute (written to the admin audit log)'
        : 'reject a held change: it is not served, and the sync does not hold it again (written to the admin audit log)',
    )
    .action((id: string) =>
      withQuietContainer(config, async (container) => {
        // The CLI is the operator, as for `openvat keys` on the database: `cli (USER@HOST)`.
        const operator = cliActor();
        const outcome = await container.ratesUpdates.decide(id, decision, {
          by: operator.name,
          record: container.admin.recorder(operator),
        });
        if (outcome.kind !== 'ok')
          throw new UsageError(
            outcome.reason === 'not_found'
              ? `no rate change with id ${id}`
              : `rate change ${id} is not held (any more)`,
          );
        const c = outcome.change;
        console.log(
          `${decision === 'accept' ? 'accepted' : 'rejected'}: ${c.country_code} from ${c.valid_from}, ${ratesText(c)}`,
        );
      }),
    );
}
