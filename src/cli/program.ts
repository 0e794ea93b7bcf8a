import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig } from '../config.js';
import { adminErrorCannotRun } from './admin-api.js';
import { counted } from './counts.js';
import { cannotRun, EXIT_CANNOT_RUN } from './usage-error.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

const program = new Command();
program
  .name('openvat')
  .description('Self-hostable VAT validation service; without a command, `openvat` runs `serve`.')
  .version(version, '-V, --version', 'print the version');

function config() {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`openvat: ${error.message}`);
      process.exit(EXIT_CANNOT_RUN);
    }
    throw error;
  }
}

program
  .command('serve', { isDefault: true })
  .description('run the HTTP API (HOST, PORT, DATABASE_URL, …); the default command')
  .action(async () => {
    // Before the service allocates anything: V8's allocation-site pretenuring was measured to put
    // short-lived per-request objects into the old generation in some runs, which then doubled the
    // cost of every request (instructions per request on GET /v1/rates/de: 83k without it; 83k or
    // 154k, depending on the run, with it).
    setFlagsFromString('--no-allocation-site-pretenuring');
    const { holdYoungGeneration, releaseYoungGeneration } = await import('./start-heap.js');
    holdYoungGeneration();
    // The settings are checked before the service is loaded, so a bad one is reported at once.
    const settings = config();
    const { serve } = await import('../main.js');
    // Resolves once the service has started (it runs until SIGTERM/SIGINT).
    await serve(settings);
    releaseYoungGeneration();
  });

program
  .command('migrate')
  .description('apply database migrations and exit (a new database, with its directory, when there is none)')
  .action(async () => {
    const { createDatabase } = await import('../db/database.js');
    // The way to make a new database anywhere: its directory is created too.
    const db = createDatabase(config().databaseUrl, { createDirectory: true });
    await db.migrate();
    await db.close();
    console.log(`migrated ${db.describe}`);
  });

/**
 * The commands defined in modules of their own, by name, each loaded only when it is the command
 * run (all of them for the help): `openvat keys list` loads neither the evidence checks nor the file
 * validation, and `openvat --version` none of them.
 */
const backupCommands = async () => (await import('./backup.js')).createBackupCommands(config);
const COMMAND_MODULES: Record<string, () => Promise<Command[]>> = {
  accounts: async () => [(await import('./accounts.js')).createAccountsCommands(config)],
  keys: async () => [(await import('./keys.js')).createKeysCommands(config)],
  'admin-keys': async () => [(await import('./admin-keys.js')).createAdminKeysCommands(config)],
  evidence: async () => [(await import('./evidence.js')).createEvidenceCommands(config)],
  'validate-file': async () => [(await import('./validate-file.js')).createValidateFileCommand(config)],
  monitors: async () => [(await import('./monitors.js')).createMonitorsCommands(config)],
  backup: backupCommands,
  restore: backupCommands,
  rates: async () => [(await import('./rates.js')).createRatesCommands(config)],
  registers: async () => [(await import('./registers.js')).createRegistersCommands(config)],
};

/** The command modules a run needs: the one named, none (`serve`, `--version`), or all (the help). */
function modulesFor(first: string | undefined): (() => Promise<Command[]>)[] {
  if (first === undefined || ['serve', 'migrate', 'simulate', '-V', '--version'].includes(first)) return [];
  const named = COMMAND_MODULES[first];
  if (named) return [named];
  return [...new Set(Object.values(COMMAND_MODULES))];
}

for (const load of modulesFor(process.argv[2]))
  for (const command of await load()) program.addCommand(command);

program
  .command('simulate')
  .description(
    'serve local simulators of VIES, HMRC, the Swiss UID register, Brønnøysund, eVatR and the Peppol SML and SMPs',
  )
  .addOption(
    new Option('--port <port>', 'port to listen on').default(9099).argParser((v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError('not a port number');
      return n;
    }),
  )
  .option('--host <host>', 'address to bind', '127.0.0.1')
  .option('--latency <ms>', 'added latency per upstream call in milliseconds', '0')
  .addOption(
    new Option('--dns-port <port>', 'UDP and TCP port of the simulated Peppol SML (DNS)')
      .default(9053)
      .argParser((v) => {
        const n = Number(v);
        if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError('not a port number');
        return n;
      }),
  )
  .action(async (options: { port: number; host: string; latency: string; dnsPort: number }) => {
    const { runSimulator } = await import('./simulate.js');
    await runSimulator(options);
  });

/** Edit distance between two words (for "did you mean"). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

// `serve` is the default command, so without this check a mistyped command (`openvat key list`)
// would reach it as arguments and be reported as "too many arguments for 'serve'".
const first = process.argv[2];
const names = [
  ...new Set([
    ...program.commands.flatMap((c) => [c.name(), ...c.aliases()]),
    ...Object.keys(COMMAND_MODULES),
  ]),
  'help',
];
if (first !== undefined && !first.startsWith('-') && !names.includes(first)) {
  const closest = names
    .map((name) => ({ name, d: distance(first.toLowerCase(), name) }))
    .sort((x, y) => x.d - y.d)[0];
  const hint =
    closest && closest.d <= Math.max(2, Math.floor(first.length / 2))
      ? ` Did you mean '${closest.name}'?`
      : '';
  console.error(`openvat: unknown command '${first}'.${hint} Run 'openvat --help' for the list of commands.`);
  process.exit(EXIT_CANNOT_RUN);
}

// Usage errors Commander reports itself (an unknown option, a missing argument, a bad value) exit
// with 2 like every other command that cannot run as asked; help and --version exit with 0.
const everyCommand = (command: Command): Command[] => [command, ...command.commands.flatMap(everyCommand)];
// Each on one line, like every other error of the CLI: `openvat: unknown option '--rate-limt'. Did
// you mean --rate-limit?` (Commander writes the suggestion on a line of its own).
// A long value refused is named by its start and length, not repeated whole (a 70,000-character
// --metadata value would make a 70 KB line).
const oneLine = (text: string) =>
  `openvat: ${text
    .replace(/^error: /, '')
    .replace(/\n\((Did you mean [^\n]*\?)\)/, '. $1')
    .replace(
      /(argument|value) '([\s\S]{61,}?)' is invalid/,
      (_, word: string, value: string) =>
        `${word} '${value.slice(0, 40)}…' (${counted(value.length, 'character', 'characters')}) is invalid`,
    )
    .trimEnd()}\n`;
for (const command of everyCommand(program)) {
  command.exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : EXIT_CANNOT_RUN));
  command.configureOutput({ outputError: (text, write) => write(oneLine(text)) });
}

program.parseAsync().catch((error: unknown) => {
  console.error(`openvat: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(cannotRun(error) || adminErrorCannotRun(error) ? EXIT_CANNOT_RUN : 1);
});
