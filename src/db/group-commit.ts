import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

export type Work = (trx: Kysely<Database>) => Promise<void>;

/**
 * Group commit: units of work that arrive while a transaction is being written are committed
 * together in the next one, so concurrent API calls share a commit instead of queueing for one each.
 * Every unit still commits atomically with its own writes, and its caller waits for the commit. If a
 * group fails, each of its units is retried in a transaction of its own, so only a failing unit fails.
 */
export function createGroupCommit(
  db: Kysely<Database>,
  options: { maxUnits?: number; onCommit?: (units: number) => void } = {},
) {
  const maxUnits = options.maxUnits ?? 256;
  let queue: Array<{ work: Work; resolve: () => void; reject: (error: unknown) => void }> = [];
  let flushing = false;

  async function flush(): Promise<void> {
    flushing = true;
    try {
      while (queue.length > 0) {
        const group = queue.slice(0, maxUnits);
        queue = queue.slice(group.length);
        try {
          await db.transaction().execute(async (trx) => {
            for (const unit of group) await unit.work(trx);
          });
          for (const unit of group) unit.resolve();
          options.onCommit?.(group.length);
        } catch {
          for (const unit of group) {
            try {
              await db.transaction().execute(unit.work);
              unit.resolve();
            } catch (error) {
              unit.reject(error);
            }
          }
        }
      }
    } finally {
      flushing = false;
    }
  }

  return {
    /** Runs `work` in a transaction shared with the other units waiting now; resolves once committed. */
    run(work: Work): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        queue.push({ work, resolve, reject });
        if (!flushing) setImmediate(() => void flush());
      });
    },
  };
}

export type GroupCommit = ReturnType<typeof createGroupCommit>;
