/**
 * Concurrency permits per registry and member state: a FIFO semaphore with two priorities in this
 * process, or a semaphore of leases shared by every instance through Redis.
 */
import { randomUUID } from 'node:crypto';
import {
  ACQUIRE_LUA,
  type AdaptiveOptions,
  type AdaptiveState,
  adaptiveLimit,
  adaptiveThrottled,
  DEFAULT_ADAPTIVE,
  IN_FLIGHT_LUA,
  RENEW_LUA,
  THROTTLED_LUA,
} from './permit-limits.js';
import { type SharedOptions, withTimeout } from './shared-store.js';

export type Priority = 'interactive' | 'background';

export interface Permit {
  release(): void;
}

export interface PermitView {
  key: string;
  /** Calls running: on every instance when shared, else in this process. */
  inFlight: number;
  /** Calls of this process waiting for a permit. */
  queued: number;
  /** Permits now (the configured limit, or less while the registry throttles): as this process sees it. */
  limit: number;
}

export interface Permits {
  /**
   * Waits for a permit for `key` (FIFO, interactive callers before background ones); rejects with
   * the signal's reason if aborted while waiting.
   */
  acquire(key: string, options?: { priority?: Priority; signal?: AbortSignal }): Promise<Permit>;
  run<T>(
    key: string,
    task: () => Promise<T>,
    options?: { priority?: Priority; signal?: AbortSignal },
  ): Promise<T>;
  snapshot(): Promise<PermitView[]>;
  /**
   * Tells that the registry behind `key` throttled a call (too many concurrent requests): the limit
   * for `key` is halved, at most once per cool-down, and then grows back by one permit per interval
   * (see `adaptiveLimit`). Shared by every instance through Redis.
   */
  throttled(key: string): void;
  /** Whether permits are counted in Redis right now (false while falling back). */
  shared(): boolean;
  close(): void;
}

interface Waiter {
  priority: Priority;
  grant: (permit: Permit) => void;
  reject: (error: unknown) => void;
}
export interface PermitsOptions {
  /** Permits per key over all instances (or in this process without Redis). */
  limitFor: (key: string) => number;
  /** How the limit adapts when a registry throttles; default `DEFAULT_ADAPTIVE`. */
  adaptive?: AdaptiveOptions;
  /** Milliseconds since the epoch (tests move it); default `Date.now`. */
  now?: () => number;
  shared?: SharedOptions & {
    /** How long a permit lives without renewal: a dead holder's permits are free after it. */
    leaseMs: number;
    /** Instances alive by the last heartbeat (`null` = unknown); while Redis fails each takes ceil(limit / n). */
    instances: () => number | null;
    /** How long after a failed Redis command permits are counted locally before Redis is tried again; default 2 s. */
    retryAfterMs?: number;
  };
  random?: () => number;
}

/**
 * Concurrency permits per key. Locally a FIFO semaphore with two priorities. With Redis a
 * semaphore of leases in a sorted set: each instance queues its own callers and one pump per key
 * takes permits for them, renewing the leases of running calls every lease/3; it polls with short
 * jittered sleeps while the set is full and wakes at once when one of its own permits comes back.
 * While Redis fails, each instance counts `ceil(limit / instances)` permits locally and tries Redis
 * again every `retryAfterMs` (2 s). A registry that throttles lowers the limit (`throttled`, `adaptiveLimit`); with
 * Redis the lowered limit is shared, and kept locally too for the time Redis fails.
 */
export function createPermits(options: PermitsOptions): Permits {
  const random = options.random ?? Math.random;
  const shared = options.shared;
  const now = options.now ?? Date.now;
  const adaptive = options.adaptive ?? DEFAULT_ADAPTIVE;
  /** Caps lowered by throttling, per key (this process's view; Redis holds the shared one). */
  const caps = new Map<string, AdaptiveState>();
  const limitOf = (key: string) => adaptiveLimit(options.limitFor(key), caps.get(key), now(), adaptive);
  const queues = new Map<string, { interactive: Waiter[]; background: Waiter[] }>();
  /** Permits this process holds per key, by where they were counted. */
  const heldRedis = new Map<string, Set<string>>();
  const heldLocal = new Map<string, number>();
  const pumping = new Set<string>();
  const wakers = new Map<string, () => void>();
  let degradedUntil = 0;
  let renewTimer: NodeJS.Timeout | null = null;

  const queueOf = (key: string) => {
    let q = queues.get(key);
    if (!q) {
      q = { interactive: [], background: [] };
      queues.set(key, q);
    }
    return q;
  };
  const waiting = (key: string) => {
    const q = queues.get(key);
    return q ? q.interactive.length + q.background.length : 0;
  };
  const next = (key: string): Waiter | undefined => {
    const q = queueOf(key);
    return q.interactive.shift() ?? q.background.shift();
  };
  const wake = (key: string) => {
    const w = wakers.get(key);
    if (w) {
      wakers.delete(key);
      w();
    }
  };
  const pause = (key: string, ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wakers.delete(key);
        resolve();
      }, ms);
      wakers.set(key, () => {
        clearTimeout(timer);
        resolve();
      });
    });

  const useRedis = () => shared !== undefined && Date.now() >= degradedUntil;

  function localLimit(key: string): number {
    const limit = limitOf(key);
    if (!shared) return limit;
    const n = shared.instances();
    return n && n > 0 ? Math.max(1, Math.ceil(limit / n)) : 1;
  }

  function localPermit(key: string): Permit {
    heldLocal.set(key, (heldLocal.get(key) ?? 0) + 1);
    let done = false;
    return {
      release() {
        if (done) return;
        done = true;
        heldLocal.set(key, (heldLocal.get(key) ?? 1) - 1);
        wake(key);
        void pump(key);
      },
    };
  }

  function redisPermit(key: string, id: string): Permit {
    let set = heldRedis.get(key);
    if (!set) {
      set = new Set();
      heldRedis.set(key, set);
    }
    set.add(id);
    ensureRenewal();
    let done = false;
    return {
      release() {
        if (done) return;
        done = true;
        heldRedis.get(key)?.delete(id);
        if (shared) {
          withTimeout(
            shared.redis.eval("return redis.call('ZREM', KEYS[1], ARGV[1])", 1, zkey(key), id),
            shared.commandTimeoutMs ?? 1_000,
          ).catch((error: unknown) => shared.onDegraded(error));
        }
        wake(key);
        void pump(key);
      },
    };
  }

  const zkey = (key: string) => `${shared?.prefix ?? ''}permits:${key}`;
  const capKey = (key: string) => `${shared?.prefix ?? ''}permit-cap:${key}`;

  function ensureRenewal() {
    if (!shared || renewTimer) return;
    renewTimer = setInterval(
      () => {
        let any = false;
        for (const [key, ids] of heldRedis) {
          if (ids.size === 0) continue;
          any = true;
          withTimeout(
            shared.redis.eval(RENEW_LUA, 1, zkey(key), shared.leaseMs, ...ids),
            shared.commandTimeoutMs ?? 1_000,
          ).catch((error: unknown) => shared.onDegraded(error));
        }
        if (!any && renewTimer) {
          clearInterval(renewTimer);
          renewTimer = null;
        }
      },
      Math.max(50, Math.floor(shared.leaseMs / 3)),
    );
    renewTimer.unref();
  }

  /** Hands permits to this process's waiters for `key` while any wait; one pump per key. */
  async function pump(key: string): Promise<void> {
    if (pumping.has(key)) return;
    pumping.add(key);
    try {
      while (waiting(key) > 0) {
        if (!useRedis()) {
          const free = localLimit(key) - (heldLocal.get(key) ?? 0);
          if (free > 0) {
            next(key)?.grant(localPermit(key));
            continue;
          }
          await pause(key, shared ? 250 : 60_000);
          continue;
        }
        const mine = heldRedis.get(key)?.size ?? 0;
        const want = Math.min(waiting(key), options.limitFor(key) - mine);
        if (want <= 0) {
          await pause(key, 1_000);
          continue;
        }
        const ids = Array.from({ length: want }, () => randomUUID());
        let granted: number;
        try {
          granted = Number(
            await withTimeout(
              (shared as NonNullable<typeof shared>).redis.eval(
                ACQUIRE_LUA,
                2,
                zkey(key),
                capKey(key),
                options.limitFor(key),
                (shared as NonNullable<typeof shared>).leaseMs,
                adaptive.increaseEveryMs,
                ...ids,
              ),
              shared?.commandTimeoutMs ?? 1_000,
            ),
          );
        } catch (error) {
          shared?.onDegraded(error);
          degradedUntil = Date.now() + (shared?.retryAfterMs ?? 2_000);
          continue;
        }
        for (let i = 0; i < granted; i++) {
          const permit = redisPermit(key, ids[i] as string);
          const waiter = next(key);
          if (waiter) waiter.grant(permit);
          else permit.release();
        }
        if (granted < want) await pause(key, 5 + Math.floor(random() * 20));
      }
    } finally {
      pumping.delete(key);
      if (waiting(key) === 0) queues.delete(key);
    }
  }

  async function acquire(
    key: string,
    opts: { priority?: Priority; signal?: AbortSignal } = {},
  ): Promise<Permit> {
    const { signal } = opts;
    const priority = opts.priority ?? 'interactive';
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    // Fast path without Redis: a free permit and nobody waiting.
    if (!useRedis() && waiting(key) === 0 && (heldLocal.get(key) ?? 0) < localLimit(key)) {
      return localPermit(key);
    }
    const permit = new Promise<Permit>((resolve, reject) => {
      const list = queueOf(key)[priority];
      const onAbort = () => {
        const i = list.indexOf(waiter);
        if (i >= 0) list.splice(i, 1);
        reject(signal?.reason ?? new Error('aborted'));
      };
      const waiter: Waiter = {
        priority,
        grant: (p) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(p);
        },
        reject,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      list.push(waiter);
    });
    void pump(key);
    return permit;
  }

  return {
    acquire,
    async run(key, task, opts) {
      const permit = await acquire(key, opts);
      try {
        return await task();
      } finally {
        permit.release();
      }
    },
    async snapshot() {
      const keys = new Set([...heldLocal.keys(), ...heldRedis.keys(), ...queues.keys()]);
      // Redis is asked only if it answers the first question, then about every key at once, so a
      // Redis that hangs costs one command timeout rather than one per key.
      let ask = shared !== undefined && useRedis();
      if (shared && ask) {
        try {
          for (const k of await withTimeout(
            shared.redis.smembers(`${shared.prefix}breakers`),
            shared.commandTimeoutMs ?? 1_000,
          ))
            keys.add(k);
        } catch {
          ask = false;
        }
      }
      return Promise.all(
        [...keys].map(async (key): Promise<PermitView> => {
          let inFlight = (heldLocal.get(key) ?? 0) + (heldRedis.get(key)?.size ?? 0);
          let limit = shared && !useRedis() ? localLimit(key) : limitOf(key);
          if (shared && ask) {
            try {
              const [count, cap] = (await withTimeout(
                shared.redis.eval(
                  IN_FLIGHT_LUA,
                  2,
                  zkey(key),
                  capKey(key),
                  options.limitFor(key),
                  adaptive.increaseEveryMs,
                ),
                shared.commandTimeoutMs ?? 1_000,
              )) as [number, number];
              inFlight = Number(count);
              limit = Number(cap);
            } catch {}
          }
          return { key, inFlight, queued: waiting(key), limit };
        }),
      );
    },
    throttled(key) {
      const configured = options.limitFor(key);
      caps.set(key, adaptiveThrottled(configured, caps.get(key), now(), adaptive));
      if (shared && useRedis()) {
        withTimeout(
          shared.redis.eval(
            THROTTLED_LUA,
            1,
            capKey(key),
            configured,
            adaptive.cooldownMs,
            adaptive.increaseEveryMs,
          ),
          shared.commandTimeoutMs ?? 1_000,
        ).catch((error: unknown) => shared.onDegraded(error));
      }
    },
    shared: () => useRedis(),
    close() {
      if (renewTimer) clearInterval(renewTimer);
      renewTimer = null;
    },
  };
}
