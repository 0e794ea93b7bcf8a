import { Command } from 'commander';
import type { Config } from '../config.js';
import { createDatabase } from '../db/database.js';
import { createConfirmationsRepository } from '../modules/confirmations/repository.js';
import { verifyEvidenceChain } from '../modules/confirmations/service.js';

/**
 * `openvat evidence verify`: walks the whole confirmation chain on the same DATABASE_URL as the
 * server and reports OK (exit 0) or the first broken `seq` (exit 1).
 */
export function createEvidenceCommands(config: () => Config): Command {
  const evidence = new Command('evidence').description('check the stored confirmation evidence');

  evidence
    .command('verify')
    .description('verify the hash chain of every stored confirmation (exit 0 = intact, 1 = broken)')
    .option('--json', 'print one JSON object with the report on stdout')
    .action(async (options: { json?: boolean }) => {
      const db = createDatabase(config().databaseUrl);
      let intact = false;
      try {
        await db.migrate();
        const report = await verifyEvidenceChain(createConfirmationsRepository(db.kysely));
        intact = report.ok;
        if (options.json) {
          console.log(JSON.stringify(report));
        } else if (report.ok) {
          console.log(
            `OK: ${report.count} confirmation(s), chain intact up to seq ${report.headSeq} (head ${report.headHash})`,
          );
        } else {
          console.log(`BROKEN at seq ${report.seq}: ${report.message} (${report.reason})`);
          console.log(`${report.count} confirmation(s) before it verified.`);
        }
      } finally {
        await db.close();
      }
      process.exitCode = intact ? 0 : 1;
    });

  return evidence;
}
