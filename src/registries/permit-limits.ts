/**
 * How many permits are in force: the adaptive limit a throttling registry lowers (pure, and
 * mirrored in Lua), and the Redis scripts of the shared semaphore of leases.
 */

/** Redis's clock in milliseconds, as `now` (every instance reads the same clock). */
const NOW_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * `adaptiveLimit` in Lua: the limit in force for a configured `limit`, given the cap hash (cap and
 * when it was set) and the interval of growth; also answers when the cap was set (nil: none).
 */
const LIMIT_IN_FORCE_LUA = `
local function limit_in_force(key, limit, every)
  local s = redis.call('HMGET', key, 'cap', 'at')
  if not s[1] then return limit, nil end
  local at = tonumber(s[2])
  return math.min(limit, tonumber(s[1]) + math.floor((now - at) / every)), at
end
`;

/**
 * Acquires up to N permits at once: drops expired leases, then adds ids while the set is below the
 * limit (the configured one, or the adaptive cap while the registry throttles: `adaptiveLimit`).
 * Scored by Redis's own clock, so instances with skewed clocks agree on expiry.
 * KEYS[1] = the sorted set, KEYS[2] = the adaptive cap; ARGV = limit, leaseMs, increaseEveryMs, ids…
 * Answers how many ids were added.
 */
export const ACQUIRE_LUA = `${NOW_LUA}${LIMIT_IN_FORCE_LUA}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local free = limit_in_force(KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[3])) - redis.call('ZCARD', KEYS[1])
local granted = 0
for i = 4, #ARGV do
  if granted >= free then break end
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[i])
  granted = granted + 1
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 4)
return granted
`;

/** Extends the leases of the ids still held (XX: a lease that already expired is not revived). */
export const RENEW_LUA = `${NOW_LUA}for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 4)
return 1
`;

/**
 * A throttled call halves the shared cap (`adaptiveThrottled`, mirrored here on Redis's clock).
 * KEYS[1] = the cap (a hash of cap and at); ARGV = configured limit, cooldownMs, increaseEveryMs.
 * Answers the cap now in force.
 */
export const THROTTLED_LUA = `${NOW_LUA}${LIMIT_IN_FORCE_LUA}
local limit, at = limit_in_force(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[3]))
if at and now - at < tonumber(ARGV[2]) then return limit end
local cap = math.max(1, math.floor(limit / 2))
redis.call('HSET', KEYS[1], 'cap', cap, 'at', now)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * tonumber(ARGV[3]) + tonumber(ARGV[2]))
return cap
`;

/**
 * Calls in flight and the limit in force (as `adaptiveLimit` computes it), for the status page.
 * KEYS = the sorted set, the cap; ARGV = limit, increaseEveryMs.
 */
export const IN_FLIGHT_LUA = `${NOW_LUA}${LIMIT_IN_FORCE_LUA}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return { redis.call('ZCARD', KEYS[1]), (limit_in_force(KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]))) }
`;

/** How the limit adapts to a registry that throttles (`Permits.throttled`). */
export interface AdaptiveOptions {
  /** Throttled calls within this time of the last halving do not halve again (one burst, one step). */
  cooldownMs: number;
  /** The cap grows back by one permit per this interval without throttling, up to the configured limit. */
  increaseEveryMs: number;
}

export const DEFAULT_ADAPTIVE: AdaptiveOptions = { cooldownMs: 1_000, increaseEveryMs: 10_000 };

/** The cap set by the last halving, and when. */
export interface AdaptiveState {
  cap: number;
  at: number;
}

/**
 * The limit in force: the configured one, or, after a registry throttled, the cap it was halved to
 * plus one permit per `increaseEveryMs` since (additive increase, multiplicative decrease, as TCP
 * does): VIES publishes no per-member-state limit, so the limit that a member state accepts is found
 * by asking. Mirrored by `ACQUIRE_LUA`, `THROTTLED_LUA` and `CAP_LUA`.
 */
export function adaptiveLimit(
  configured: number,
  s: AdaptiveState | undefined,
  now: number,
  options: AdaptiveOptions,
): number {
  if (!s) return configured;
  return Math.min(configured, s.cap + Math.floor((now - s.at) / options.increaseEveryMs));
}

/** A throttled call: the limit in force is halved (at least 1), unless it was halved within the cool-down. */
export function adaptiveThrottled(
  configured: number,
  s: AdaptiveState | undefined,
  now: number,
  options: AdaptiveOptions,
): AdaptiveState {
  if (s && now - s.at < options.cooldownMs) return s;
  return { cap: Math.max(1, Math.floor(adaptiveLimit(configured, s, now, options) / 2)), at: now };
}
