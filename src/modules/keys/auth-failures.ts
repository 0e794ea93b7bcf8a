import { errors } from '../../http/api-error.js';
import { boundedCache } from '../../lib/bounded-cache.js';
import type { Clock } from '../../lib/clock.js';
import { seconds } from '../../lib/errors.js';
import {
  createRedisWindowLimiter,
  createWindowLimiter,
  localSharedLimiter,
  type RedisCounter,
  type SharedWindowLimiter,
} from '../../lib/window-limiter.js';

const MINUTE_MS = 60_000;

/** The answer to a credential that is not valid from an address beyond its failed authentications. */
export function tooManyFailures(retryAfterSeconds: number) {
  return errors.rateLimited(
    retryAfterSeconds,
    `Too many failed authentications from this address; retry after ${seconds(retryAfterSeconds)}.`,
  );
}

/** The failed authentications of client addresses. */
export interface AuthFailures {
  /** Failed authentications an address may make per minute. */
  readonly max: number;
  /**
   * Counts one failed authentication of `address` (a credential that is not valid): 0 while the
   * address is within the limit, else the seconds until the minute ends, when it is answered 429.
   */
  fail(address: string): Promise<number>;
}

/**
 * The limit on failed authentications per client address (`OPENVAT_AUTH_FAILURES_PER_MINUTE`). Only
 * credentials that are not valid count, and the limit is applied to them alone: a valid credential
 * is checked and accepted from any address, so that clients sharing an address (behind one proxy or
 * NAT) are never refused for another's failures. The failures are counted in fixed minute windows,
 * in this process or, with Redis, across instances (while Redis fails, each instance counts for
 * itself). An address that has used up its minute is remembered here until the minute ends, so its
 * further failures are answered without counting them again.
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
  const blockedUntil = boundedCache<string, number>(100_000);
  const windowEnd = (now: number) => (Math.floor(now / MINUTE_MS) + 1) * MINUTE_MS;
  const secondsUntil = (end: number, now: number) => Math.max(1, Math.ceil((end - now) / 1000));

  /** Seconds until the minute of an address that has used it up ends; 0 for any other address. */
  function blocked(address: string): number {
    const until = blockedUntil.get(address);
    if (until === undefined) return 0;
    const now = clock.millis();
    if (now >= until) {
      blockedUntil.delete(address);
      return 0;
    }
    return secondsUntil(until, now);
  }

  async function fail(address: string): Promise<number> {
    const wait = blocked(address);
    if (wait !== 0) return wait;
    const { count } = await limiter.hit(address);
    const now = clock.millis();
    if (count >= max) blockedUntil.set(address, windowEnd(now));
    return count > max ? secondsUntil(windowEnd(now), now) : 0;
  }

  return { max, fail };
}
