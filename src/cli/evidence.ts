import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { readTsaRoots } from '../config/timestamps.js';
import type { Config } from '../config.js';
import {
  createHeadSigner,
  parseEvidenceKey,
  parsePublicKey,
  parseSignedHead,
  publicKeyPem,
} from '../modules/confirmations/anchor.js';
import { createConfirmationsRepository } from '../modules/confirmations/repository.js';
import {
  type AnchoredReport,
  acknowledgeHead,
  exportSignedHead,
  verifyEvidenceChain,
} from '../modules/confirmations/verify.js';
import { exportToken } from '../modules/evidence-timestamps/export.js';
import { createEvidenceTimestampsRepository } from '../modules/evidence-timestamps/repository.js';
import { type TrustedRoots, trustedRoots } from '../modules/evidence-timestamps/trust.js';
import {
  checkStoredToken,
  type TimestampsReport,
  verifyTimestamps,
} from '../modules/evidence-timestamps/verify.js';
import { counted } from './counts.js';
import { openExistingDatabase } from './database.js';
import { cannotRun, EXIT_CANNOT_RUN, UsageError } from './usage-error.js';

// Exit codes: 0 = intact, 1 = the evidence does not verify, 2 = the command cannot run (usage, key, database).

function signerFrom(config: Config) {
  if (!config.evidenceKey) {
    throw new UsageError(
      'OPENVAT_EVIDENCE_KEY is not set: it holds the Ed25519 private key that signs the chain head (see docs/evidence.md)',
    );
  }
  return createHeadSigner(parseEvidenceKey(config.evidenceKey));
}

async function withRepository<T>(
  config: Config,
  run: (
    repository: ReturnType<typeof createConfirmationsRepository>,
    timestamps: ReturnType<typeof createEvidenceTimestampsRepository>,
  ) => Promise<T>,
) {
  const db = openExistingDatabase(config.databaseUrl);
  try {
    await db.migrate();
    return await run(
      createConfirmationsRepository(db.kysely),
      createEvidenceTimestampsRepository(db.kysely, db.dialect),
    );
  } finally {
    await db.close();
  }
}

/**
 * The roots time-stamp tokens are checked against: an auditor's own `--tsa-roots FILE`, else
 * `OPENVAT_TSA_ROOTS`; null with neither (tokens cannot be checked then).
 */
function pinnedRoots(file: string | undefined, config: Config): TrustedRoots | null {
  if (file !== undefined) {
    const path = resolve(file);
    return trustedRoots(readTsaRoots('--tsa-roots', path), `--tsa-roots ${path}`);
  }
  const roots = config.timestamps.roots;
  return roots ? trustedRoots(roots.pems, `OPENVAT_TSA_ROOTS (${roots.path})`) : null;
}

const NO_ROOTS = 'no trusted TSA roots are known: give --tsa-roots FILE or set OPENVAT_TSA_ROOTS';

type ChainOk = Extract<AnchoredReport, { ok: true }>;

/** The chain verified, but stored tokens could not be checked (no roots): never reported as OK. */
type UncheckedReport = Omit<ChainOk, 'ok'> & {
  ok: false;
  unchecked: true;
  reason: 'timestamps_unchecked';
  timestamps: { count: number; checked: false };
  message: string;
};

/** The verification report, with the time-stamp tokens checked once the chain verified. */
type VerifyReport =
  | (ChainOk & { timestamps: Extract<TimestampsReport, { ok: true }> })
  | UncheckedReport
  | Extract<AnchoredReport, { ok: false }>
  | Extract<TimestampsReport, { ok: false }>;

/** Runs a command body, mapping refusals to a message on stderr and exit code 2. */
async function guarded(run: () => Promise<number>): Promise<void> {
  try {
    process.exitCode = await run();
  } catch (error) {
    if (cannotRun(error)) {
      console.error(`openvat: ${(error as Error).message}`);
      process.exitCode = EXIT_CANNOT_RUN;
      return;
    }
    throw error;
  }
}

function describe(report: AnchoredReport | VerifyReport): string[] {
  if ('unchecked' in report) {
    return [
      `NOT CHECKED: ${counted(report.count, 'confirmation', 'confirmations')}, chain intact up to seq ${report.headSeq} (head ${report.headHash}), but ${report.message}`,
    ];
  }
  if (!report.ok) {
    return [
      `BROKEN at seq ${report.seq}: ${report.message} (${report.reason})`,
      `${counted(report.count, 'confirmation', 'confirmations')} before it verified.`,
    ];
  }
  const timestamps = 'timestamps' in report ? report.timestamps : null;
  const anchors = [
    report.signed ? 'head signature valid' : null,
    report.exportedSeq !== null ? `exported head seq ${report.exportedSeq} found unchanged` : null,
    timestamps
      ? `${counted(timestamps.count, 'time-stamp token', 'time-stamp tokens')} valid${timestamps.newest ? ` (newest over seq ${timestamps.newest.head_seq} at ${timestamps.newest.gen_time} by ${timestamps.newest.tsa_url})` : ''}`
      : null,
  ].filter((a) => a !== null);
  return [
    `OK: ${counted(report.count, 'confirmation', 'confirmations')}, chain intact up to seq ${report.headSeq} (head ${report.headHash})${anchors.length ? `; ${anchors.join('; ')}` : ''}`,
  ];
}

/**
 * `openvat evidence verify|public-key|export-head`: the operator's checks of the confirmation
 * evidence, on the same DATABASE_URL as the server (docs/evidence.md).
 */
export function createEvidenceCommands(config: () => Config): Command {
  const evidence = new Command('evidence').description('check and anchor the stored confirmation evidence');

  evidence
    .command('verify')
    .description(
      'verify the hash chain of every stored confirmation, the head signature, an exported head and every stored time-stamp token (exit 0 = intact, 1 = broken, 2 = cannot verify)',
    )
    .option('--json', 'print one JSON object with the report on stdout')
    .option(
      '--head <file>',
      'a head saved by "openvat evidence export-head": the chain must still contain it',
    )
    .option(
      '--public-key <file>',
      'the evidence public key (PEM); default: derived from OPENVAT_EVIDENCE_KEY',
    )
    .option(
      '--tsa-roots <file>',
      "the time-stamping authorities' root certificates (PEM) to check the tokens against, and only those; default: OPENVAT_TSA_ROOTS",
    )
    .action((options: { json?: boolean; head?: string; publicKey?: string; tsaRoots?: string }) =>
      guarded(async () => {
        const c = config();
        const roots = pinnedRoots(options.tsaRoots, c);
        const publicKey = options.publicKey
          ? parsePublicKey(readFileSync(options.publicKey, 'utf8'))
          : c.evidenceKey
            ? createHeadSigner(parseEvidenceKey(c.evidenceKey)).publicKey
            : undefined;
        const exported = options.head ? parseSignedHead(readFileSync(options.head, 'utf8')) : undefined;
        if (exported && !publicKey) {
          throw new UsageError(
            '--head needs the evidence public key: give --public-key FILE or set OPENVAT_EVIDENCE_KEY',
          );
        }
        const report = await withRepository(c, async (repository, tokens): Promise<VerifyReport> => {
          const chain = await verifyEvidenceChain(repository, 500, { publicKey, exported });
          if (!chain.ok) return chain;
          if (!roots) {
            const count = await tokens.count();
            if (count === 0) return { ...chain, timestamps: { ok: true, count: 0, newest: null } };
            return {
              ...chain,
              ok: false,
              unchecked: true,
              reason: 'timestamps_unchecked',
              timestamps: { count, checked: false },
              message: `${counted(count, 'stored time-stamp token', 'stored time-stamp tokens')} cannot be checked: ${NO_ROOTS}`,
            };
          }
          const timestamps = await verifyTimestamps(tokens, repository, chain.headSeq, roots);
          return timestamps.ok ? { ...chain, timestamps } : timestamps;
        });
        if (options.json) console.log(JSON.stringify(report));
        else for (const line of describe(report)) console.log(line);
        if ('unchecked' in report) return EXIT_CANNOT_RUN;
        return report.ok ? 0 : 1;
      }),
    );

  evidence
    .command('public-key')
    .description('print the public key of OPENVAT_EVIDENCE_KEY (PEM), for verifying exported heads elsewhere')
    .action(() =>
      guarded(async () => {
        process.stdout.write(publicKeyPem(signerFrom(config()).publicKey));
        return 0;
      }),
    );

  evidence
    .command('export-head')
    .description(
      'verify the chain and its head signature, then print the signed head (JSON) to keep outside the database',
    )
    .option('--out <file>', 'write the signed head to this file instead of stdout')
    .action((options: { out?: string }) =>
      guarded(async () => {
        const c = config();
        const signer = signerFrom(c);
        const result = await withRepository(c, (repository) =>
          exportSignedHead(repository, signer, new Date()),
        );
        if (!result.ok) {
          for (const line of describe(result.report)) console.error(line);
          console.error(
            'The head was not exported: a chain that does not verify, or a head without a valid signature, is never signed here. Review it, then run "openvat evidence acknowledge" (docs/evidence.md).',
          );
          return 1;
        }
        const text = `${JSON.stringify(result.head, null, 2)}\n`;
        if (options.out) writeFileSync(options.out, text);
        else process.stdout.write(text);
        return 0;
      }),
    );

  evidence
    .command('export-token')
    .description(
      'write the time-stamp token over chain head --seq (or the first one covering it) with the head bytes and certificates, to verify with OpenSSL alone',
    )
    .requiredOption('--seq <n>', 'the chain head seq whose token is exported')
    .option('--out <dir>', 'the directory to write (default: evidence-timestamp-<seq>)')
    .option(
      '--tsa-roots <file>',
      "the time-stamping authorities' root certificates (PEM) the token must chain to; default: OPENVAT_TSA_ROOTS",
    )
    .action((options: { seq: string; out?: string; tsaRoots?: string }) =>
      guarded(async () => {
        const c = config();
        const seq = Number(options.seq);
        if (!Number.isInteger(seq) || seq < 1) throw new UsageError('--seq must be a whole number from 1');
        const roots = pinnedRoots(options.tsaRoots, c);
        if (!roots) throw new UsageError(`export-token checks the token first, but ${NO_ROOTS}`);
        const result = await withRepository(c, async (repository, tokens) => {
          const row = (await tokens.ofSeq(seq))[0] ?? (await tokens.firstCovering(seq));
          if (!row) return { error: `no time-stamp token covers chain head seq ${seq} yet` };
          const head = await repository.head();
          const checked = await checkStoredToken(row, repository, Number(head?.seq ?? 0), roots);
          if (!checked.ok) {
            return {
              error: `the token over head seq ${row.head_seq} does not verify against the stored chain and ${roots.source}: ${checked.message} (run "openvat evidence verify")`,
            };
          }
          return { row, hash: checked.hash, root: checked.facts.root };
        });
        if ('error' in result) {
          console.error(`openvat: nothing was exported: ${result.error}`);
          return 1;
        }
        const headSeq = Number(result.row.head_seq);
        const dir = resolve(options.out ?? `evidence-timestamp-${headSeq}`);
        const written = exportToken(result.row, result.hash, { root: result.root, source: roots.source });
        mkdirSync(dir, { recursive: true });
        for (const file of written.files) writeFileSync(join(dir, file.name), file.content);
        if (headSeq !== seq)
          console.log(
            `No token over head seq ${seq}: exported the first one covering it, over head seq ${headSeq}.`,
          );
        console.log(
          `Wrote the token over head seq ${headSeq} (${result.row.gen_time}, ${result.row.tsa_url}) to ${dir}`,
        );
        console.log('Verify it there with OpenSSL alone:');
        for (const command of written.commands) console.log(`  ${command}`);
        return 0;
      }),
    );

  evidence
    .command('acknowledge')
    .description(
      'after a review, accept the current chain head: sign it and record the acknowledgement, so that confirmations stopped by the evidence check resume from it',
    )
    .requiredOption(
      '--seq <n>',
      'the seq of the head that was reviewed (as "openvat evidence verify" shows it)',
    )
    .requiredOption('--hash <hex>', 'the hash of the head that was reviewed')
    .requiredOption('--reason <text>', 'why the head is accepted (kept with the acknowledgement)')
    .option('--json', 'print one JSON object with the acknowledgement on stdout')
    .action((options: { seq: string; hash: string; reason: string; json?: boolean }) =>
      guarded(async () => {
        const c = config();
        const signer = signerFrom(c);
        const seq = Number(options.seq);
        if (!Number.isInteger(seq) || seq < 0) throw new UsageError('--seq must be a whole number');
        if (!/^[0-9a-f]{64}$/.test(options.hash))
          throw new UsageError('--hash must be 64 lowercase hex digits');
        if (options.reason.trim() === '') throw new UsageError('--reason must say why the head is accepted');
        const result = await withRepository(c, (repository) =>
          acknowledgeHead(repository, signer, {
            id: randomUUID(),
            seq,
            hash: options.hash,
            reason: options.reason.trim(),
            now: new Date(),
          }),
        );
        if (!result.ok) {
          console.error(`openvat: nothing was acknowledged: ${result.message}`);
          return 1;
        }
        const { acknowledgement, report } = result;
        if (options.json) {
          console.log(JSON.stringify({ acknowledgement: { ...acknowledgement, report: undefined }, report }));
        } else {
          console.log(
            `Acknowledged head seq ${acknowledgement.seq} (${acknowledgement.hash}) at ${acknowledgement.acknowledged_at}; the head is signed and confirmations resume from it.`,
          );
          for (const line of describe(report)) console.log(`Before the acknowledgement: ${line}`);
        }
        return 0;
      }),
    );

  return evidence;
}
