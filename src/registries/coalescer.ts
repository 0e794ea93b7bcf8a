/**
 * Request coalescing: concurrent calls with the same key share one upstream call, in this process
 * or across every instance through a Redis lock.
 */
import { randomUUID } from 'node:crypto';
import { type SharedOptions, withTimeout } from './shared-store.js';

export interface Coalescer {
  /**
   * Runs `task` once for the concurrent callers of `key`. A caller with a `signal` stops waiting when
   * it aborts (rejecting with its reason); the task's own signal aborts once every caller that joined
   * has gone, so a call nobody waits for any more is cancelled while one that another caller still
   * waits for goes on. A caller without a signal (batch items, monitor checks) waits to the end.
   */
  run<T>(key: string, task: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T>;
  readonly size: number;
}

interface SharedCall {
  promise: Promise<unknown>;
  controller: AbortController;
  /** Callers still waiting; a caller without a signal never leaves. */
  waiting: number;
}

/** Concurrent calls with the same key in this process share one promise. */
export function createCoalescer(): Coalescer {
  const inFlight = new Map<string, SharedCall>();
  return {
    run<T>(key: string, task: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
      if (signal?.aborted) return Promise.reject(signal.reason);
      let call = inFlight.get(key);
      if (!call) {
        const controller = new AbortController();
        const created: SharedCall = { controller, waiting: 0, promise: Promise.resolve() };
        created.promise = task(controller.signal).finally(() => {
          if (inFlight.get(key) === created) inFlight.delete(key);
        });
        inFlight.set(key, created);
        call = created;
      }
      const shared = call;
      shared.waiting += 1;
      if (!signal) return shared.promise as Promise<T>;
      return new Promise<T>((resolve, reject) => {
        const leave = () => {
          shared.waiting -= 1;
          if (shared.waiting === 0) {
            // Nobody waits any more: later callers start afresh, and the shared call is cancelled.
            if (inFlight.get(key) === shared) inFlight.delete(key);
            shared.controller.abort(signal.reason);
          }
          reject(signal.reason);
        };
        signal.addEventListener('abort', leave, { once: true });
        shared.promise.then(
          (value) => {
            signal.removeEventListener('abort', leave);
            resolve(value as T);
          },
          (error: unknown) => {
            signal.removeEventListener('abort', leave);
            reject(error);
          },
        );
      });
    },
    get size() {
      return inFlight.size;
    },
  };
}

/**
 * Concurrent calls with the same key on every instance share one upstream call: the first takes a
 * lock (`SET NX PX`, expiring if its holder dies) and publishes its result under the lock's token
 * for a few seconds; the others poll for that result with short jittered sleeps. When the lock
 * disappears without a result, or Redis fails, a waiter runs the task itself.
 */
export function createSharedCoalescer(
  options: SharedOptions & {
    /** How long a leader may hold the lock (longer than the task can take). */
    lockMs: number;
    encode: (value: unknown) => string;
    decode: (text: string) => unknown;
    random?: () => number;
  },
): Coalescer {
  const local = createCoalescer();
  const { redis, prefix } = options;
  const random = options.random ?? Math.random;
  const timeout = options.commandTimeoutMs ?? 1_000;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  async function lead<T>(
    lock: string,
    token: string,
    task: (signal: AbortSignal) => Promise<T>,
    signal: AbortSignal,
  ): Promise<T> {
    let value: T | undefined;
    let ok = false;
    try {
      value = await task(signal);
      ok = true;
      return value;
    } finally {
      try {
        if (ok)
          await withTimeout(redis.set(`${lock}:${token}`, options.encode(value), 'PX', 10_000), timeout);
        await withTimeout(
          redis.eval(
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
            1,
            lock,
            token,
          ),
          timeout,
        );
      } catch (error) {
        options.onDegraded(error);
      }
    }
  }

  /** `{ lead }` when this call must run the task, else the result another instance published. */
  async function follow(lock: string, signal: AbortSignal): Promise<{ lead: string } | { value: unknown }> {
    const started = Date.now();
    for (;;) {
      signal.throwIfAborted();
      const token = randomUUID();
      if ((await withTimeout(redis.set(lock, token, 'PX', options.lockMs, 'NX'), timeout)) === 'OK')
        return { lead: token };
      const holder = await withTimeout(redis.get(lock), timeout);
      if (holder === null) continue;
      for (;;) {
        await sleep(10 + Math.floor(random() * 20));
        signal.throwIfAborted();
        const result = await withTimeout(redis.get(`${lock}:${holder}`), timeout);
        if (result !== null) return { value: options.decode(result) };
        if ((await withTimeout(redis.get(lock), timeout)) !== holder) break;
        if (Date.now() - started > options.lockMs) throw new Error('coalescing lock held too long');
      }
      const result = await withTimeout(redis.get(`${lock}:${holder}`), timeout);
      if (result !== null) return { value: options.decode(result) };
    }
  }

  async function across<T>(
    key: string,
    task: (signal: AbortSignal) => Promise<T>,
    signal: AbortSignal,
  ): Promise<T> {
    const lock = `${prefix}coalesce:${key}`;
    let step: { lead: string } | { value: unknown };
    try {
      step = await follow(lock, signal);
    } catch (error) {
      // Every caller here has gone: nothing is left to wait for.
      if (signal.aborted) throw error;
      options.onDegraded(error);
      return task(signal);
    }
    if ('value' in step) return step.value as T;
    return lead(lock, step.lead, task, signal);
  }

  return {
    run: (key, task, signal) => local.run(key, (shared) => across(key, task, shared), signal),
    get size() {
      return local.size;
    },
  };
}
