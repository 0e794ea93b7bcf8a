import { LRUCache } from 'lru-cache';
import type { Clock } from '../../lib/clock.js';
import {
  createRedisWindowLimiter,
  createWindowLimiter,
  localSharedLimiter,
  type RedisCounter,
  type SharedWindowLimiter,
} from '../../lib/window-limiter.js';

const MINUTE_MS = 60_000;

/** The failed authentications of client addresses, and whether an address may try again now. */
export interface AuthFailures {
  /** Failed authentications an address may make per minute. */
  readonly max: number;
  /** Seconds until `address` may try a key that is not known here again; 0 when it may now. */
  blocked(address: string): number;
  /**
   * Counts one failed authentication of `address`: 0 while it is within the limit, else the seconds
   * until the minute ends.
   */
  fail(address: string): Promise<number>;
}

/**
 * The limit on failed authentications per client address (`OPENVAT_AUTH_FAILURES_PER_MINUTE`), so
 * that presenting made-up keys costs a client its attempts rather than the database its reads. The
 * failures are counted in fixed minute windows, in this process or, with Redis, across instances
 * (while Redis fails, each instance counts for itself). An address that has used up its minute is
 * remembered here until the minute ends: its keys that this instance does not know are then refused
 * without being read.
 */
export function createAuthFailures(options: {
  max: number;
  clock: Clock;
  redis?: RedisCounter | null;
  /** Prefix of the Redis keys (`OPENVAT_REDIS_PREFIX`). */
  redisPrefix?: string;
  onError?: (error: unknown) => void;
}): AuthFailures {
  const { max, clock } = options;
  const window = { max, windowMs: MINUTE_MS, clock };
  const limiter: SharedWindowLimiter = options.redis
    ? createRedisWindowLimiter({
        ...window,
        redis: options.redis,
        prefix: `${options.redisPrefix ?? 'openvat:'}auth-failures:`,
        ...(options.onError ? { onError: options.onError } : {}),
      })
    : localSharedLimiter(createWindowLimiter(window));
  /** Addresses that have used up their failures, with the end of that minute (bounded). */
  const blockedUntil = new LRUCache<string, number>({ max: 100_000 });
  const windowEnd = (now: number) => (Math.floor(now / MINUTE_MS) + 1) * MINUTE_MS;
  const secondsUntil = (end: number, now: number) => Math.max(1, Math.ceil((end - now) / 1000));

  return {
    max,
    blocked(address) {
      const until = blockedUntil.get(address);
      if (until === undefined) return 0;
      const now = clock.millis();
      if (now >= until) {
        blockedUntil.delete(address);
        return 0;
      }
      return secondsUntil(until, now);
    },
    async fail(address) {
      const { count } = await limiter.hit(address);
      const now = clock.millis();
      if (count >= max) blockedUntil.set(address, windowEnd(now));
      return count > max ? secondsUntil(windowEnd(now), now) : 0;
    },
  };
}
