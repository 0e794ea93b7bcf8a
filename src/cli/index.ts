#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig } from '../config.js';
import { createDatabase } from '../db/database.js';
import { createEvidenceCommands } from './evidence.js';
import { createKeysCommands } from './keys.js';
import { createValidateFileCommand } from './validate-file.js';

const program = new Command();
program.name('openvat').description('Self-hostable VAT validation service').showHelpAfterError();

function config() {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`openvat: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
}

program
  .command('serve', { isDefault: true })
  .description('run the HTTP API (HOST, PORT, DATABASE_URL, …)')
  .action(async () => {
    // Before the service allocates anything: V8's allocation-site pretenuring was measured to put
    // short-lived per-request objects into the old generation in some runs, which then doubled the
    // cost of every request (instructions per request on GET /v1/rates/de: 83k without it; 83k or
    // 154k, depending on the run, with it).
    setFlagsFromString('--no-allocation-site-pretenuring');
    const { serve } = await import('../main.js');
    await serve(config());
  });

program
  .command('migrate')
  .description('apply database migrations and exit')
  .action(async () => {
    const db = createDatabase(config().databaseUrl);
    await db.migrate();
    await db.close();
    console.log(`migrated ${db.describe}`);
  });

program.addCommand(createKeysCommands(config));
program.addCommand(createEvidenceCommands(config));
program.addCommand(createValidateFileCommand(config));

program
  .command('simulate')
  .description('serve local simulators of VIES, HMRC, the Swiss UID register, Brønnøysund and eVatR')
  .addOption(
    new Option('--port <port>', 'port to listen on').default(9099).argParser((v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError('not a port number');
      return n;
    }),
  )
  .option('--host <host>', 'address to bind', '127.0.0.1')
  .option('--latency <ms>', 'added latency per upstream call in milliseconds', '0')
  .action(async (options: { port: number; host: string; latency: string }) => {
    const { runSimulator } = await import('./simulate.js');
    await runSimulator(options);
  });

program.parseAsync().catch((error: unknown) => {
  console.error(`openvat: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
