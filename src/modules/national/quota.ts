/**
 * The published quotas of the national registers, counted before a call is made: the request
 * windows (RO at most 1 request a second, CZ 2,000 an hour and 10,000 a day) and the daily quota
 * that resets at midnight in the register's time zone (PL 100 searches a day per IP address; one
 * more blocks the address until midnight). A call beyond a quota is not made: the register counts
 * as throttled until the window turns. Counted in this process, or shared by every instance through
 * Redis (one Lua script takes every window at once, or none), since the register sees one address.
 */
import { secondsUntilMidnight, zoneDate } from '../../registries/national-common.js';
import type { NationalLimits } from '../../registries/national-port.js';
import { type SharedOptions, withTimeout } from '../../registries/shared-store.js';

export type QuotaGrant = { ok: true } | { ok: false; retryAfterSeconds: number; window: string };

export interface NationalQuota {
  /** Takes `count` requests of every window of `limits` for `key`, or none when one is spent. */
  take(key: string, limits: NationalLimits, count?: number): Promise<QuotaGrant>;
  /** Requests taken in each window now, for the status page. */
  used(key: string, limits: NationalLimits): Promise<{ window: string; used: number; limit: number }[]>;
}

interface Window {
  /** `1s`, `1h`, `24h`, `day`: how the status page names it. */
  name: string;
  /** The counter's key suffix: the window's number, or the register's local day. */
  slot: string;
  limit: number;
  /** When the counter may be forgotten, milliseconds from now. */
  ttlMs: number;
  retryAfterSeconds: number;
}

function windowName(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${Math.max(1, Math.round(ms / 1000))}s`;
}

/** The windows of `limits` at `nowMs`. */
export function quotaWindows(limits: NationalLimits, nowMs: number): Window[] {
  const windows: Window[] = limits.rates.map((rate) => {
    const index = Math.floor(nowMs / rate.windowMs);
    const endsIn = (index + 1) * rate.windowMs - nowMs;
    return {
      name: windowName(rate.windowMs),
      slot: `${rate.windowMs}:${index}`,
      limit: rate.requests,
      ttlMs: endsIn + 1_000,
      retryAfterSeconds: Math.max(1, Math.ceil(endsIn / 1000)),
    };
  });
  if (limits.daily) {
    const untilMidnight = secondsUntilMidnight(limits.daily.timeZone, new Date(nowMs));
    windows.push({
      name: 'day',
      slot: `day:${zoneDate(limits.daily.timeZone, nowMs)}`,
      limit: limits.daily.requests,
      ttlMs: untilMidnight * 1000 + 60_000,
      retryAfterSeconds: untilMidnight,
    });
  }
  return windows;
}

/** Counters in this process. */
export function createLocalQuota(options: { now?: () => number } = {}): NationalQuota {
  const now = options.now ?? Date.now;
  const counters = new Map<string, { count: number; expiresAt: number }>();

  function current(key: string, at: number): number {
    const counter = counters.get(key);
    if (!counter) return 0;
    if (counter.expiresAt <= at) {
      counters.delete(key);
      return 0;
    }
    return counter.count;
  }

  return {
    async take(key, limits, count = 1) {
      const at = now();
      const windows = quotaWindows(limits, at);
      for (const window of windows) {
        if (current(`${key}|${window.slot}`, at) + count > window.limit)
          return { ok: false, retryAfterSeconds: window.retryAfterSeconds, window: window.name };
      }
      for (const window of windows) {
        const id = `${key}|${window.slot}`;
        counters.set(id, { count: current(id, at) + count, expiresAt: at + window.ttlMs });
      }
      if (counters.size > 10_000) for (const id of counters.keys()) current(id, at);
      return { ok: true };
    },
    async used(key, limits) {
      const at = now();
      return quotaWindows(limits, at).map((window) => ({
        window: window.name,
        used: current(`${key}|${window.slot}`, at),
        limit: window.limit,
      }));
    },
  };
}

/**
 * Takes ARGV[1] from every KEYS[i] whose limit is ARGV[1 + 2i - 1]... : ARGV = count, then per key
 * its limit and ttl in ms. Answers 0 when all were taken, else the index (1-based) of the first
 * window that is spent (nothing is taken then).
 */
const TAKE_LUA = `
local count = tonumber(ARGV[1])
for i = 1, #KEYS do
  local used = tonumber(redis.call('GET', KEYS[i]) or '0')
  if used + count > tonumber(ARGV[2 * i]) then return i end
end
for i = 1, #KEYS do
  redis.call('INCRBY', KEYS[i], count)
  redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[2 * i + 1]))
end
return 0
`;

/** Counters in Redis, shared by every instance; this process's counters while Redis fails. */
export function createSharedQuota(options: SharedOptions & { now?: () => number }): NationalQuota {
  const local = createLocalQuota(options.now ? { now: options.now } : {});
  const now = options.now ?? Date.now;
  const timeout = options.commandTimeoutMs ?? 1_000;
  const keyOf = (key: string, window: Window) => `${options.prefix}national-quota:${key}:${window.slot}`;

  return {
    async take(key, limits, count = 1) {
      const windows = quotaWindows(limits, now());
      if (windows.length === 0) return { ok: true };
      try {
        const spent = Number(
          await withTimeout(
            options.redis.eval(
              TAKE_LUA,
              windows.length,
              ...windows.map((window) => keyOf(key, window)),
              count,
              ...windows.flatMap((window) => [window.limit, window.ttlMs]),
            ),
            timeout,
          ),
        );
        const window = spent > 0 ? windows[spent - 1] : undefined;
        return window
          ? { ok: false, retryAfterSeconds: window.retryAfterSeconds, window: window.name }
          : { ok: true };
      } catch (error) {
        options.onDegraded(error);
        return local.take(key, limits, count);
      }
    },
    async used(key, limits) {
      const windows = quotaWindows(limits, now());
      try {
        return await Promise.all(
          windows.map(async (window) => ({
            window: window.name,
            used: Number((await withTimeout(options.redis.get(keyOf(key, window)), timeout)) ?? 0),
            limit: window.limit,
          })),
        );
      } catch (error) {
        options.onDegraded(error);
        return local.used(key, limits);
      }
    },
  };
}
