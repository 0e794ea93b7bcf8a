import { ConfigError } from '../config.js';
import { EvidenceKeyError } from '../modules/confirmations/anchor.js';

/**
 * Exit status of every command: 0 done; 1 done, but it reports a failure (a row refused or failed,
 * a chain that does not verify) or something failed unexpectedly; 2 it cannot run as asked (usage,
 * configuration, a missing database, a key it cannot use, an input or output file it cannot use).
 */
export const EXIT_CANNOT_RUN = 2;

/** A command that cannot run as asked; reported as a message and exit status 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Whether an error means the command cannot run as asked (exit status 2). */
export function cannotRun(error: unknown): boolean {
  return (
    error instanceof UsageError ||
    error instanceof ConfigError ||
    error instanceof EvidenceKeyError ||
    (error as Error | null)?.name === 'MissingDatabaseError' ||
    (error as Error | null)?.name === 'DatabaseLocationError'
  );
}
