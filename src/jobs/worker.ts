import { setMaxListeners } from 'node:events';

/** Port for timers, so the polling loop can be driven by tests or replaced. */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: Timers = {
  setTimeout: (callback, ms) => {
    const handle = setTimeout(callback, ms);
    handle.unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface WorkerOptions<T> {
  name: string;
  /** Claims up to `limit` due items (under a lease) and returns them. */
  claim(limit: number): Promise<T[]>;
  /** Processes one claimed item; `signal` aborts when the worker stops. Should not throw. */
  handle(item: T, signal: AbortSignal): Promise<void>;
  /** Items processed at the same time. */
  concurrency: number;
  /** Pause between polls when nothing is due. */
  idleDelayMs: number;
  /**
   * How long after an item finishes the worker claims again (default 0). Items finish one at a time;
   * a short wait lets one claim refill the slots several of them freed.
   */
  refillDelayMs?: number;
  onError(error: unknown): void;
  timers?: Timers;
}

export interface Worker {
  readonly name: string;
  /** Starts polling in the background. */
  start(): void;
  /** Stops polling, aborts in-flight items and waits for them to settle. Idempotent. */
  stop(): Promise<void>;
  /** Wakes the loop up soon (new work was written). No effect when stopped. */
  notify(): void;
  /** One claim of up to `concurrency` due items, all processed; resolves with how many. */
  runOnce(): Promise<number>;
  /** `runOnce` until nothing is due; resolves with the total. */
  drain(): Promise<number>;
}

/** How soon a notified worker polls: lets the notifying transaction commit first. */
const NOTIFY_DELAY_MS = 5;

/**
 * A polling worker over any leased queue (webhook deliveries, batch items): claims as many items as
 * it has free slots, processes them concurrently, and polls again as slots free up or after an idle
 * pause. Durability lives in the queue (the claim lease), not here: a process killed mid-item loses
 * nothing because its leases expire and another worker claims the rows again.
 */
export function createWorker<T>(options: WorkerOptions<T>): Worker {
  const timers = options.timers ?? systemTimers;
  const refillDelayMs = options.refillDelayMs ?? 0;
  const inFlight = new Set<Promise<void>>();
  const newController = () => {
    const created = new AbortController();
    // Every in-flight item listens on the same signal.
    setMaxListeners(options.concurrency + 10, created.signal);
    return created;
  };
  let controller = newController();
  let running = false;
  let claiming: Promise<void> | null = null;
  /** A poll was asked for while a claim was running: poll again as soon as it ends. */
  let pollAgain = false;
  let timer: unknown = null;
  let timerDue = Number.POSITIVE_INFINITY;

  function schedule(ms: number) {
    if (!running) return;
    const at = Date.now() + ms;
    if (timer !== null && timerDue <= at) return;
    if (timer !== null) timers.clearTimeout(timer);
    timerDue = at;
    timer = timers.setTimeout(() => {
      timer = null;
      timerDue = Number.POSITIVE_INFINITY;
      void tick();
    }, ms);
  }

  function launch(item: T, signal: AbortSignal): Promise<void> {
    const task: Promise<void> = options
      .handle(item, signal)
      .catch((error: unknown) => options.onError(error))
      .finally(() => {
        inFlight.delete(task);
        schedule(refillDelayMs);
      });
    inFlight.add(task);
    return task;
  }

  async function tick(): Promise<void> {
    if (!running) return;
    if (claiming) {
      pollAgain = true;
      return;
    }
    pollAgain = false;
    const free = options.concurrency - inFlight.size;
    if (free <= 0) return;
    let claimed = 0;
    claiming = (async () => {
      try {
        const items = await options.claim(free);
        claimed = items.length;
        for (const item of items) launch(item, controller.signal);
      } catch (error) {
        options.onError(error);
      }
    })();
    await claiming;
    claiming = null;
    // A full claim means there may be more: completions poll again. Otherwise wait for new work.
    if (pollAgain) schedule(0);
    else if (claimed < free) schedule(options.idleDelayMs);
  }

  async function runOnce(): Promise<number> {
    const items = await options.claim(options.concurrency);
    await Promise.all(items.map((item) => launch(item, controller.signal)));
    return items.length;
  }

  return {
    name: options.name,
    start() {
      if (running) return;
      running = true;
      if (controller.signal.aborted) controller = newController();
      schedule(0);
    },
    async stop() {
      running = false;
      if (timer !== null) timers.clearTimeout(timer);
      timer = null;
      timerDue = Number.POSITIVE_INFINITY;
      if (claiming) await claiming;
      controller.abort();
      await Promise.allSettled([...inFlight]);
    },
    notify() {
      schedule(NOTIFY_DELAY_MS);
    },
    runOnce,
    async drain() {
      let total = 0;
      for (;;) {
        const n = await runOnce();
        if (n === 0) return total;
        total += n;
      }
    },
  };
}
