import type { Clock } from './clock.js';

export interface WindowLimiter {
  /** Counts one request for `key`: 0 when it is within the limit, else the seconds until the window resets. */
  take(key: string): number;
  /** Counts one request for `key`: its count in the current window, and the seconds until that ends. */
  hit(key: string): WindowHit;
  readonly max: number;
}

export interface WindowHit {
  count: number;
  resetSeconds: number;
}

/** The `x-ratelimit-*` headers of an answer: the budget, what is left of it, and when it is whole again. */
export function rateLimitHeaders(
  limit: number,
  remaining: number,
  resetSeconds: number,
): Record<string, string> {
  return {
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': String(resetSeconds),
  };
}

/**
 * Fixed-window request counter kept in this process, synchronous so a hot public route pays one
 * map lookup for it. Windows are aligned to the clock (a minute window resets on the minute), and the
 * counts of a past window are dropped whole, so memory is bounded by the keys seen in one window.
 */
export function createWindowLimiter(options: { max: number; windowMs: number; clock: Clock }): WindowLimiter {
  const { max, windowMs, clock } = options;
  let window = -1;
  let counts = new Map<string, number>();
  function count(key: string, now: number): number {
    const current = Math.floor(now / windowMs);
    if (current !== window) {
      window = current;
      counts = new Map();
    }
    const n = (counts.get(key) ?? 0) + 1;
    counts.set(key, n);
    return n;
  }
  const resetSeconds = (now: number) =>
    Math.max(1, Math.ceil(((Math.floor(now / windowMs) + 1) * windowMs - now) / 1000));
  return {
    max,
    take(key) {
      const now = clock.millis();
      return count(key, now) <= max ? 0 : resetSeconds(now);
    },
    hit(key) {
      const now = clock.millis();
      return { count: count(key, now), resetSeconds: resetSeconds(now) };
    },
  };
}

/** A window limiter whose counts may live outside this process. */
export interface SharedWindowLimiter {
  /** Counts one request for `key`: 0 when it is within the limit, else the seconds until the window resets. */
  take(key: string): Promise<number>;
  /** Counts one request for `key`: its count in the current window, and the seconds until that ends. */
  hit(key: string): Promise<WindowHit>;
  readonly max: number;
}

/** The commands of a Redis client the shared limiter uses (ioredis's `multi`). */
export interface RedisCounter {
  multi(): RedisCounterPipeline;
}

export interface RedisCounterPipeline {
  incr(key: string): RedisCounterPipeline;
  pexpire(key: string, ms: number): RedisCounterPipeline;
  exec(): Promise<Array<[Error | null, unknown]> | null>;
}

/**
 * The same fixed windows counted in Redis, so that every instance shares one budget per key: an
 * `INCR` of the window's key, which expires with the window. When Redis cannot be reached, the
 * request is counted in this process instead, so the limit still holds per instance.
 */
export function createRedisWindowLimiter(options: {
  redis: RedisCounter;
  prefix: string;
  max: number;
  windowMs: number;
  clock: Clock;
  onError?: (error: unknown) => void;
}): SharedWindowLimiter {
  const { redis, prefix, max, windowMs, clock } = options;
  const local = createWindowLimiter({ max, windowMs, clock });
  async function hit(key: string): Promise<WindowHit> {
    const now = clock.millis();
    const window = Math.floor(now / windowMs);
    const name = `${prefix}${window}:${key}`;
    try {
      const replies = await redis.multi().incr(name).pexpire(name, windowMs).exec();
      const [error, value] = replies?.[0] ?? [new Error('no reply'), null];
      if (error) throw error;
      return {
        count: Number(value),
        resetSeconds: Math.max(1, Math.ceil(((window + 1) * windowMs - now) / 1000)),
      };
    } catch (error) {
      options.onError?.(error);
      return local.hit(key);
    }
  }
  return {
    max,
    hit,
    async take(key) {
      const { count, resetSeconds } = await hit(key);
      return count <= max ? 0 : resetSeconds;
    },
  };
}

/** A process-local limiter behind the shared limiter's interface. */
export function localSharedLimiter(limiter: WindowLimiter): SharedWindowLimiter {
  return { max: limiter.max, take: async (key) => limiter.take(key), hit: async (key) => limiter.hit(key) };
}
