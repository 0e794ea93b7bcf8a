import type { Clock } from '../lib/clock.js';

export interface WindowLimiter {
  /** Counts one request for `key`: 0 when it is within the limit, else the seconds until the window resets. */
  take(key: string): number;
  readonly max: number;
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
  return {
    max,
    take(key) {
      const now = clock.millis();
      const current = Math.floor(now / windowMs);
      if (current !== window) {
        window = current;
        counts = new Map();
      }
      const count = (counts.get(key) ?? 0) + 1;
      counts.set(key, count);
      if (count <= max) return 0;
      return Math.max(1, Math.ceil(((current + 1) * windowMs - now) / 1000));
    },
  };
}

/** A window limiter whose counts may live outside this process. */
export interface SharedWindowLimiter {
  /** Counts one request for `key`: 0 when it is within the limit, else the seconds until the window resets. */
  take(key: string): Promise<number>;
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
  return {
    max,
    async take(key) {
      const now = clock.millis();
      const window = Math.floor(now / windowMs);
      const name = `${prefix}${window}:${key}`;
      let count: number;
      try {
        const replies = await redis.multi().incr(name).pexpire(name, windowMs).exec();
        const [error, value] = replies?.[0] ?? [new Error('no reply'), null];
        if (error) throw error;
        count = Number(value);
      } catch (error) {
        options.onError?.(error);
        return local.take(key);
      }
      if (count <= max) return 0;
      return Math.max(1, Math.ceil(((window + 1) * windowMs - now) / 1000));
    },
  };
}

/** A process-local limiter behind the shared limiter's interface. */
export function localSharedLimiter(limiter: WindowLimiter): SharedWindowLimiter {
  return { max: limiter.max, take: async (key) => limiter.take(key) };
}
