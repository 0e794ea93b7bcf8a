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
