/**
 * Request coalescing: concurrent calls with the same key share one upstream call, in this process
 * or across every instance through a Redis lock.
 */
import { randomUUID } from 'node:crypto';
import { type SharedOptions, withTimeout } from './shared-store.js';

export interface Coalescer {
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
  readonly size: number;
}

/** Concurrent calls with the same key in this process share one promise. */
export function createCoalescer(): Coalescer {
  const inFlight = new Map<string, Promise<unknown>>();
  return {
    run<T>(key: string, task: () => Promise<T>): Promise<T> {
      const existing = inFlight.get(key);
      if (existing) return existing as Promise<T>;
      const promise = task().finally(() => inFlight.delete(key));
      inFlight.set(key, promise);
      return promise;
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

  async function lead<T>(lock: string, token: string, task: () => Promise<T>): Promise<T> {
    let value: T | undefined;
    let ok = false;
    try {
      value = await task();
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
  async function follow(lock: string): Promise<{ lead: string } | { value: unknown }> {
    const started = Date.now();
    for (;;) {
      const token = randomUUID();
      if ((await withTimeout(redis.set(lock, token, 'PX', options.lockMs, 'NX'), timeout)) === 'OK')
        return { lead: token };
      const holder = await withTimeout(redis.get(lock), timeout);
      if (holder === null) continue;
      for (;;) {
        await sleep(10 + Math.floor(random() * 20));
        const result = await withTimeout(redis.get(`${lock}:${holder}`), timeout);
        if (result !== null) return { value: options.decode(result) };
        if ((await withTimeout(redis.get(lock), timeout)) !== holder) break;
        if (Date.now() - started > options.lockMs) throw new Error('coalescing lock held too long');
      }
      const result = await withTimeout(redis.get(`${lock}:${holder}`), timeout);
      if (result !== null) return { value: options.decode(result) };
    }
  }

  async function across<T>(key: string, task: () => Promise<T>): Promise<T> {
    const lock = `${prefix}coalesce:${key}`;
    let step: { lead: string } | { value: unknown };
    try {
      step = await follow(lock);
    } catch (error) {
      options.onDegraded(error);
      return task();
    }
    if ('value' in step) return step.value as T;
    return lead(lock, step.lead, task);
  }

  return {
    run: (key, task) => local.run(key, () => across(key, task)),
    get size() {
      return local.size;
    },
  };
}
