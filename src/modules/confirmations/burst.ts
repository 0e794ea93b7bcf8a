import { boundedCache } from '../../lib/bounded-cache.js';
import type { Clock } from '../../lib/clock.js';

/** Port: the local burst limit on confirmations, per API key. */
export interface BurstLimiter {
  /** Takes one token for `key`; when none is left, how many seconds until one is. */
  take(key: string): { allowed: true } | { allowed: false; retryAfterSeconds: number };
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * In-memory token bucket: `capacity` tokens per key, refilled evenly over `windowSeconds`
 * (10 per 10 s allows a burst of 10, then one a second). Per process: instances behind a load
 * balancer each apply it.
 */
export function createTokenBucketLimiter(options: {
  capacity: number;
  windowSeconds: number;
  clock: Clock;
}): BurstLimiter {
  const { capacity, clock } = options;
  const refillPerMs = capacity / (options.windowSeconds * 1000);
  const buckets = boundedCache<string, Bucket>(100_000);
  return {
    take(key) {
      const now = clock.now().getTime();
      const bucket = buckets.get(key) ?? { tokens: capacity, at: now };
      const elapsed = Math.max(0, now - bucket.at);
      const tokens = Math.min(capacity, bucket.tokens + elapsed * refillPerMs);
      if (tokens >= 1) {
        buckets.set(key, { tokens: tokens - 1, at: now });
        return { allowed: true };
      }
      buckets.set(key, { tokens, at: now });
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / refillPerMs / 1000)) };
    },
  };
}
