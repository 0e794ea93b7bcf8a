import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type SQLite from 'better-sqlite3';

/**
 * The thread's code: its own connection to the same file, a PASSIVE checkpoint every interval
 * (never waits for, and never blocks, the writer or readers), closed on "stop"; "quiet" is posted once
 * `quietChecks` checkpoints in a row (when above 0) found every frame copied and none added. Plain
 * JavaScript so it runs the same from `dist/` and under tsx.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.path, { fileMustExist: true });
let quiet = 0;
let lastLog = -1;
const timer = setInterval(() => {
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)');
    if (workerData.report) parentPort.postMessage({ checkpointed: row.checkpointed, log: row.log });
    quiet = row.log === lastLog && row.checkpointed === row.log ? quiet + 1 : 0;
    lastLog = row.log;
    if (workerData.quietChecks > 0 && quiet === workerData.quietChecks) parentPort.postMessage({ quiet: true });
  } catch (error) {
    parentPort.postMessage({ error: String(error) });
  }
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface CheckpointerOptions {
  /** How often the thread checkpoints. */
  intervalMs: number;
  /** Told after every checkpoint: frames in the WAL and frames copied into the database. */
  onCheckpoint?: (result: { log: number; checkpointed: number }) => void;
  /** Told when the thread fails or ends by itself; the writer's own checkpoints take over. */
  onFailure: (error: unknown) => void;
  /** Told once `quietChecks` checkpoints in a row found nothing to copy (absent or 0: never). */
  onQuiet?: () => void;
  quietChecks?: number;
}

/**
 * Copies a SQLite database's write-ahead log into the database file on a thread of its own.
 *
 * SQLite checkpoints in the connection that commits once the log passes its threshold, which on
 * this service is the event loop: the commit that crosses it copies about 1,000 pages and calls
 * fsync while every request waits. With the checkpoints here instead, a commit of a group of 37
 * audit records cost 95 µs instead of 276 µs (bench of 3,000 groups of 1.1 KB records on this
 * machine, 2026-11-24), and the paid path's p99 fell from 10–19 ms to 6–10 ms (`npm run bench --
 * paid`). The writer keeps a higher threshold of its own, so if this thread falls behind or fails
 * the log still cannot grow without bound. Under sustained writes the log only starts over at that
 * threshold (it restarts when a write finds every frame copied, which commits arriving every
 * millisecond prevent): the writer's checkpoint there copies only what this thread has not yet
 * copied, at most one interval's commits (measured: the log file stays at about 40 MB, 10,000 pages,
 * at 23,000 audited requests/s).
 */
export function startCheckpointer(path: string, options: CheckpointerOptions) {
  // Loaded here: a command, whose writes are few, starts no thread, and loading worker_threads
  // was 2–3 ms of a 80 ms `keys list` on Node 24.
  const { Worker } = createRequire(import.meta.url)(
    'node:worker_threads',
  ) as typeof import('node:worker_threads');
  const worker = new Worker(THREAD, {
    eval: true,
    workerData: {
      path,
      intervalMs: options.intervalMs,
      // Without a listener the event loop is not woken after every checkpoint.
      report: options.onCheckpoint !== undefined,
      quietChecks: options.quietChecks ?? 0,
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
    },
  });
  // It must never keep a process alive (a CLI command that forgot to close its database).
  worker.unref();
  let stopping = false;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on(
    'message',
    (message: { checkpointed: number; log: number } | { error: string } | { quiet: true }) => {
      if ('error' in message) options.onFailure(new Error(message.error));
      else if ('quiet' in message) options.onQuiet?.();
      else options.onCheckpoint?.(message);
    },
  );
  worker.on('error', (error) => options.onFailure(error));
  worker.once('exit', (code) => {
    if (!stopping) options.onFailure(new Error(`the checkpoint thread ended (exit code ${code})`));
  });
  return {
    /** Stops the thread after closing its connection (so the last close can remove the log). */
    async stop(): Promise<void> {
      if (stopping) return exited;
      stopping = true;
      worker.ref(); // the process waits for the thread's connection to close
      worker.postMessage('stop');
      await exited;
    },
  };
}

export type Checkpointer = ReturnType<typeof startCheckpointer>;

export interface OnDemandOptions extends CheckpointerOptions {
  /** The size of the log file, in bytes, past which the thread starts. */
  startAtBytes: number;
  /** Told as the thread starts. */
  onStart?: () => void;
  /**
   * Told as a thread that had nothing to copy for `quietChecks` checkpoints has stopped. The log
   * file keeps its size, so the writer must truncate it as it starts over (`journal_size_limit`) for
   * its size to tell again what was written since.
   */
  onQuietStop?: () => void;
}

/** Write transactions between two looks at the log file's size while no thread runs (the first one looks). */
export const TRANSACTIONS_PER_LOOK = 32;

/**
 * The checkpoint thread of `startCheckpointer`, started only once the log has grown past
 * `startAtBytes`: an instance that writes little (an idle one) spares the thread's memory, about
 * 10 MB resident (9.6–9.8 MB beside one SQLite connection on Node 20; 7 MB of it came back as the
 * thread stopped), and the log it writes is left to the writer's own threshold until then, as when
 * the thread fails. Until it starts, every `TRANSACTIONS_PER_LOOK`-th write transaction (counted by
 * `beforeWrite`) looks at the log file's size, a `stat` of 2.5–4 µs; that size grows only with the
 * frames written, since no checkpoint lets the log start over before the writer's threshold.
 * Starting the thread costs the event loop 0.5–8 ms (`new Worker`), once. With `quietChecks`, a thread
 * that found nothing to copy that many times in a row stops, and waits as at first. A thread that
 * fails is not started again: `onFailure` is told once.
 */
export function checkpointerOnDemand(path: string, options: OnDemandOptions) {
  let state: 'waiting' | 'running' | 'quieting' | 'done' = 'waiting';
  let thread: Checkpointer | null = null;
  let transactions = 0;
  const log = `${path}-wal`;
  return { waiting, beforeWrite, stop };

  /** Whether no thread runs, and `beforeWrite` counts transactions. */
  function waiting(): boolean {
    return state === 'waiting';
  }

  /** Counts a write transaction (or a statement that writes outside one) about to begin. */
  function beforeWrite(): void {
    if (state !== 'waiting' || transactions++ % TRANSACTIONS_PER_LOOK !== 0) return;
    if ((statSync(log, { throwIfNoEntry: false })?.size ?? 0) > options.startAtBytes) start();
  }

  function start(): void {
    state = 'running';
    try {
      thread = startCheckpointer(path, { ...options, onFailure: failed, onQuiet: quieted });
    } catch (error) {
      failed(error);
      return;
    }
    options.onStart?.();
  }

  async function quieted(): Promise<void> {
    if (state !== 'running') return;
    state = 'quieting';
    await thread?.stop();
    if (state !== 'quieting') return; // stopped meanwhile
    state = 'waiting';
    thread = null;
    // The first look after the next write, which starts the log over and cuts its file.
    transactions = 1;
    options.onQuietStop?.();
  }

  function failed(error: unknown): void {
    if (state !== 'running') return;
    state = 'done';
    options.onFailure(error);
  }

  /** Stops the thread if it runs; none starts afterwards. */
  async function stop(): Promise<void> {
    state = 'done';
    await thread?.stop();
  }
}

export type OnDemandCheckpointer = ReturnType<typeof checkpointerOnDemand>;

/** SQLite's own checkpoint threshold (pages in the log), which it keeps when no thread checkpoints. */
const WRITER_CHECKPOINT_PAGES = 1_000;
/** The writer's threshold while the checkpoint thread runs: a bound, should that thread fall behind. */
const FALLBACK_CHECKPOINT_PAGES = 10_000;

/** The checkpoint settings of a SQLite file (part of `DatabaseOptions`). */
export interface CheckpointSettings {
  /**
   * SQLite files only: how often a thread of its own checkpoints the write-ahead log (default 100 ms;
   * 0 leaves checkpoints to the committing connection, as SQLite does by default). The thread starts
   * once the log has grown past SQLite's own threshold (`checkpointerOnDemand`).
   */
  checkpointMs?: number;
  /** SQLite files only: how long the checkpoint thread finds nothing to copy before it stops (default 5 minutes). */
  checkpointQuietMs?: number;
  /** SQLite files only: told as the checkpoint thread starts, and as it stops after a quiet spell. */
  onCheckpointThread?: (event: 'started' | 'stopped') => void;
}

/**
 * The checkpoints of a SQLite file: the writer's threshold raised to a bound, and a thread that
 * checkpoints once the log has grown past the writer's usual threshold, until a quiet spell (null
 * with `checkpointMs` 0: the writer checkpoints as SQLite does by default). Should the thread fail,
 * the writer's usual threshold comes back.
 */
export function sqliteCheckpoints(
  database: SQLite.Database,
  path: string,
  options: CheckpointSettings,
): OnDemandCheckpointer | null {
  const checkpointMs = options.checkpointMs ?? 100;
  if (checkpointMs <= 0) return null;
  database.pragma(`wal_autocheckpoint = ${FALLBACK_CHECKPOINT_PAGES}`);
  const pageSize = Number(database.pragma('page_size', { simple: true }));
  const journalSizeLimit = (bytes: number) => {
    if (database.open) database.pragma(`journal_size_limit = ${bytes}`);
  };
  return checkpointerOnDemand(path, {
    intervalMs: checkpointMs,
    quietChecks: Math.max(1, Math.round((options.checkpointQuietMs ?? 5 * 60_000) / checkpointMs)),
    // The log file: a header of 32 bytes, then each page with a header of 24.
    startAtBytes: 32 + WRITER_CHECKPOINT_PAGES * (pageSize + 24),
    onStart: () => {
      journalSizeLimit(-1); // as SQLite's default: a log that starts over is overwritten in place
      options.onCheckpointThread?.('started');
    },
    onQuietStop: () => {
      // The next write starts the log over (every frame is copied) and truncates the file.
      journalSizeLimit(0);
      options.onCheckpointThread?.('stopped');
    },
    onFailure: () => {
      if (database.open) database.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
    },
  });
}
