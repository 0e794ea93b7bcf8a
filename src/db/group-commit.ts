import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

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

interface Pending<U, R> {
  unit: U;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: units that arrive while a transaction is being written are committed together in the
 * next one, so concurrent callers share a commit instead of queueing for one each. `write` handles a
 * whole group in its transaction (so it can write the group's rows with one statement per table) and
 * returns each unit's result. Every caller waits for the commit. If a group fails, each of its units
 * is retried in a transaction of its own, so only a failing unit fails.
 */
export function createGroupWriter<U, R>(
  db: Kysely<Database>,
  options: GroupCommitOptions & {
    write: (trx: Kysely<Database>, units: U[]) => Promise<R[]>;
    /**
     * Whether a group needs a transaction around its writes (default: always). A group that `write`
     * stores with one statement is atomic without one, and saves its BEGIN and COMMIT: on PostgreSQL
     * two of its three round trips.
     */
    needsTransaction?: (units: U[]) => boolean;
  },
) {
  const maxUnits = options.maxUnits ?? 256;
  const delayMs = options.delayMs ?? 0;
  let queue: Array<Pending<U, R>> = [];
  let flushing = false;
  let scheduled = false;

  const needsTransaction = options.needsTransaction ?? (() => true);
  /** Writes units in a transaction, or, when they need none, in one statement of their own. */
  function writeUnits(units: U[]): Promise<R[]> {
    if (!needsTransaction(units)) return options.write(db, units);
    return db.transaction().execute((trx) => options.write(trx, units));
  }

  async function runGroup(group: Array<Pending<U, R>>): Promise<void> {
    try {
      const results = await writeUnits(group.map((p) => p.unit));
      for (let i = 0; i < group.length; i++) group[i]?.resolve(results[i] as R);
      options.onCommit?.(group.length);
    } catch {
      for (const pending of group) {
        try {
          const [result] = await writeUnits([pending.unit]);
          pending.resolve(result as R);
          options.onCommit?.(1);
        } catch (error) {
          pending.reject(error);
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
    /** Writes `unit` with the group waiting now; resolves with its result once committed. */
    run(unit: U): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        queue.push({ unit, resolve, reject });
        schedule();
      });
    },
  };
}
