import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

export type Work<T> = (trx: Kysely<Database>) => Promise<T>;

export interface GroupCommitOptions {
  /** Most units in one transaction (default 256). */
  maxUnits?: number;
  /**
   * How long the first unit of a group waits for others before the group is written (default 0:
   * the next turn of the event loop). Work that finishes one unit at a time, like batch items as
   * their registry answers arrive, needs a few milliseconds here or nearly every group holds one unit.
   */
  delayMs?: number;
  /** Told of every committed group's size (metrics). */
  onCommit?: (units: number) => void;
}

interface Unit {
  work: Work<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: units of work that arrive while a transaction is being written are committed
 * together in the next one, so concurrent calls share a commit instead of queueing for one each.
 * Every unit still commits atomically with its own writes, and its caller waits for the commit. If a
 * group fails, each of its units is retried in a transaction of its own, so only a failing unit fails.
 */
export function createGroupCommit(db: Kysely<Database>, options: GroupCommitOptions = {}) {
  const maxUnits = options.maxUnits ?? 256;
  const delayMs = options.delayMs ?? 0;
  let queue: Unit[] = [];
  let flushing = false;
  let scheduled = false;

  async function runGroup(group: Unit[]): Promise<void> {
    try {
      const results = await db.transaction().execute(async (trx) => {
        const out: unknown[] = [];
        for (const unit of group) out.push(await unit.work(trx));
        return out;
      });
      for (let i = 0; i < group.length; i++) group[i]?.resolve(results[i]);
      options.onCommit?.(group.length);
    } catch {
      for (const unit of group) {
        try {
          unit.resolve(await db.transaction().execute(unit.work));
          options.onCommit?.(1);
        } catch (error) {
          unit.reject(error);
        }
      }
    }
  }

  async function flush(): Promise<void> {
    scheduled = false;
    flushing = true;
    try {
      while (queue.length > 0) {
        const group = queue.length <= maxUnits ? queue : queue.slice(0, maxUnits);
        queue = queue.length <= maxUnits ? [] : queue.slice(maxUnits);
        await runGroup(group);
      }
    } finally {
      flushing = false;
    }
  }

  function schedule(): void {
    if (flushing || scheduled) return;
    scheduled = true;
    if (delayMs > 0) setTimeout(() => void flush(), delayMs);
    else setImmediate(() => void flush());
  }

  return {
    /**
     * Runs `work` in a transaction shared with the other units waiting now; resolves with its result
     * once committed.
     */
    run<T>(work: Work<T>): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
        schedule();
      });
    },
  };
}

export type GroupCommit = ReturnType<typeof createGroupCommit>;
