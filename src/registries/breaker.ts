/**
 * The circuit breaker per registry and member state: one state machine written once as pure steps,
 * kept in this process or moved atomically through one Lua script on Redis.
 */
import { randomUUID } from 'node:crypto';
import type { UnavailableReason } from './port.js';
import { type SharedOptions, withTimeout } from './shared-store.js';

/** What a call's outcome means for the registry's health. */
export type CallOutcome =
  /** The registry answered (valid, invalid, throttled, refused our request): it is up. */
  | 'success'
  /** Down, timeout, unreadable answer, exception: it is unhealthy. */
  | 'failure'
  /** Nothing was learned (not configured, the caller aborted): a trial is handed back. */
  | 'neutral';

/**
 * What a registry's reason for giving no answer says about its health: throttling and a refusal of
 * our request come from a registry that is up; down, timeout and unreadable answers are failures;
 * `not_configured` made no call and teaches nothing.
 */
export function outcomeOfReason(reason: UnavailableReason): CallOutcome {
  switch (reason) {
    case 'down':
    case 'timeout':
    case 'bad_response':
      return 'failure';
    case 'throttled':
    case 'rejected':
      return 'success';
    case 'not_configured':
      return 'neutral';
  }
}

export type BreakerPhase = 'closed' | 'open' | 'half_open';

/** One breaker's stored state. Times are milliseconds since the epoch; 0 = none. */
export interface BreakerState {
  failures: number;
  /** 0 while closed; otherwise when the open period ends (half-open from then on). */
  openUntil: number;
  /** While a half-open trial runs: when it is presumed lost (its caller died) and another may start. */
  trialUntil: number;
  trialToken: string;
  lastSuccessAt: number;
  lastFailureAt: number;
}

export interface BreakerOptions {
  /** Consecutive failures that open the breaker. */
  failureThreshold: number;
  /** How long it stays open before one trial call is let through. */
  openMs: number;
  /** How long a trial may run before another caller may try (longer than a registry call can take). */
  trialMs: number;
}

export type Gate =
  | {
      allowed: true /** Set when this call is the half-open trial: hand it back with `report`. */;
      trial: string | null;
    }
  | { allowed: false; retryAfterSeconds: number };

export function emptyBreakerState(): BreakerState {
  return { failures: 0, openUntil: 0, trialUntil: 0, trialToken: '', lastSuccessAt: 0, lastFailureAt: 0 };
}

export function breakerPhase(s: BreakerState, now: number): BreakerPhase {
  if (s.openUntil === 0) return 'closed';
  return now < s.openUntil ? 'open' : 'half_open';
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * The state machine, as pure steps (mirrored by `BREAKER_LUA`):
 * - closed: every call passes; `failure` counts, and the threshold opens it; `success` resets the count.
 * - open (now < openUntil): every call is refused with the seconds left.
 * - half-open (now ≥ openUntil): one call passes as the trial; others are refused until it reports.
 *   Trial `success` → closed; `failure` → open again for `openMs`; `neutral` → the trial is handed
 *   back and the next call becomes the trial; no report within `trialMs` → the same.
 * - `open(ms)` from outside (a status endpoint says the service is down) → open until now + ms.
 */
export function breakerCheck(
  s: BreakerState,
  now: number,
  options: BreakerOptions,
  token: string,
): { state: BreakerState; gate: Gate } {
  if (s.openUntil === 0) return { state: s, gate: { allowed: true, trial: null } };
  if (now < s.openUntil)
    return { state: s, gate: { allowed: false, retryAfterSeconds: seconds(s.openUntil - now) } };
  if (s.trialUntil > now) return { state: s, gate: { allowed: false, retryAfterSeconds: 1 } };
  return {
    state: { ...s, trialUntil: now + options.trialMs, trialToken: token },
    gate: { allowed: true, trial: token },
  };
}

export function breakerReport(
  s: BreakerState,
  outcome: CallOutcome,
  trial: string | null,
  now: number,
  options: BreakerOptions,
): BreakerState {
  const ownTrial = trial !== null && trial === s.trialToken;
  if (outcome === 'success') {
    return { ...s, failures: 0, openUntil: 0, trialUntil: 0, trialToken: '', lastSuccessAt: now };
  }
  if (outcome === 'failure') {
    const failures = s.failures + 1;
    const halfOpen = s.openUntil !== 0 && now >= s.openUntil;
    if (ownTrial || halfOpen || (s.openUntil === 0 && failures >= options.failureThreshold)) {
      return {
        ...s,
        failures,
        openUntil: now + options.openMs,
        trialUntil: 0,
        trialToken: '',
        lastFailureAt: now,
      };
    }
    return { ...s, failures, lastFailureAt: now };
  }
  if (ownTrial) return { ...s, trialUntil: 0, trialToken: '' };
  return s;
}

export function breakerOpen(s: BreakerState, now: number, ms: number): BreakerState {
  return { ...s, openUntil: Math.max(s.openUntil, now + ms), trialUntil: 0, trialToken: '' };
}

export interface BreakerView {
  key: string;
  phase: BreakerPhase;
  retryAfterSeconds: number | null;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
}

function view(key: string, s: BreakerState, now: number): BreakerView {
  const phase = breakerPhase(s, now);
  return {
    key,
    phase,
    retryAfterSeconds: phase === 'open' ? seconds(s.openUntil - now) : null,
    lastSuccessAt: s.lastSuccessAt || null,
    lastFailureAt: s.lastFailureAt || null,
  };
}

/** A circuit breaker per key, stored here or in Redis. */
export interface BreakerStore {
  check(key: string): Promise<Gate>;
  report(key: string, outcome: CallOutcome, trial: string | null): Promise<void>;
  /** Opens the breaker from outside (a status endpoint says the service is down). */
  open(key: string, ms?: number): Promise<void>;
  snapshot(): Promise<BreakerView[]>;
}

export function createLocalBreaker(options: BreakerOptions & { now: () => number }): BreakerStore & {
  /** The same, synchronously (the Redis store falls back to it). */
  state: Map<string, BreakerState>;
} {
  const state = new Map<string, BreakerState>();
  const get = (key: string) => state.get(key) ?? emptyBreakerState();
  return {
    state,
    async check(key) {
      const step = breakerCheck(get(key), options.now(), options, randomUUID());
      state.set(key, step.state);
      return step.gate;
    },
    async report(key, outcome, trial) {
      state.set(key, breakerReport(get(key), outcome, trial, options.now(), options));
    },
    async open(key, ms = options.openMs) {
      state.set(key, breakerOpen(get(key), options.now(), ms));
    },
    async snapshot() {
      const now = options.now();
      return [...state].map(([key, s]) => view(key, s, now));
    },
  };
}

/**
 * The same state machine in one Lua script, so every instance moves one breaker atomically.
 * KEYS[1] = the breaker's hash, KEYS[2] = the set of breaker keys.
 * ARGV = op (check|report|open), now, key name, failureThreshold, openMs, trialMs, token, outcome, ms.
 * Answers {allowed (1/0), trial token or '', retryAfterMs}.
 */
const BREAKER_LUA = `
local h = KEYS[1]
local op = ARGV[1]
local now = tonumber(ARGV[2])
local threshold = tonumber(ARGV[4])
local openMs = tonumber(ARGV[5])
local trialMs = tonumber(ARGV[6])
local token = ARGV[7]
local outcome = ARGV[8]
redis.call('SADD', KEYS[2], ARGV[3])
local v = redis.call('HMGET', h, 'failures', 'open_until', 'trial_until', 'trial_token')
local failures = tonumber(v[1]) or 0
local openUntil = tonumber(v[2]) or 0
local trialUntil = tonumber(v[3]) or 0
local trialToken = v[4] or ''
if op == 'check' then
  if openUntil == 0 then return {1, '', 0} end
  if now < openUntil then return {0, '', openUntil - now} end
  if trialUntil > now then return {0, '', 1000} end
  redis.call('HSET', h, 'trial_until', now + trialMs, 'trial_token', token)
  return {1, token, 0}
elseif op == 'report' then
  local own = token ~= '' and token == trialToken
  if outcome == 'success' then
    redis.call('HSET', h, 'failures', 0, 'open_until', 0, 'trial_until', 0, 'trial_token', '', 'last_success', now)
  elseif outcome == 'failure' then
    failures = failures + 1
    local halfOpen = openUntil ~= 0 and now >= openUntil
    if own or halfOpen or (openUntil == 0 and failures >= threshold) then
      redis.call('HSET', h, 'failures', failures, 'open_until', now + openMs, 'trial_until', 0, 'trial_token', '', 'last_failure', now)
    else
      redis.call('HSET', h, 'failures', failures, 'last_failure', now)
    end
  elseif own then
    redis.call('HSET', h, 'trial_until', 0, 'trial_token', '')
  end
  return {1, '', 0}
elseif op == 'open' then
  local ms = tonumber(ARGV[9])
  redis.call('HSET', h, 'open_until', math.max(openUntil, now + ms), 'trial_until', 0, 'trial_token', '')
  return {1, '', 0}
end
return {0, '', 0}
`;

const SNAPSHOT_LUA = `
local out = {}
for i, k in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local v = redis.call('HMGET', ARGV[1] .. k, 'failures', 'open_until', 'trial_until', 'last_success', 'last_failure')
  table.insert(out, {k, v[1] or '0', v[2] or '0', v[3] or '0', v[4] or '0', v[5] or '0'})
end
return out
`;

/**
 * The breaker shared through Redis: a threshold reached on any instance opens it on all, and one
 * instance runs the half-open trial. When Redis fails, this instance's own breaker decides.
 */
export function createRedisBreaker(
  options: BreakerOptions & SharedOptions & { now: () => number },
): BreakerStore {
  const { redis, prefix } = options;
  const local = createLocalBreaker(options);
  const timeout = options.commandTimeoutMs ?? 1_000;
  const setKey = `${prefix}breakers`;
  const call = (op: string, key: string, token = '', outcome = '', ms = 0) =>
    withTimeout(
      redis.eval(
        BREAKER_LUA,
        2,
        `${prefix}breaker:${key}`,
        setKey,
        op,
        options.now(),
        key,
        options.failureThreshold,
        options.openMs,
        options.trialMs,
        token,
        outcome,
        ms,
      ) as Promise<[number, string, number]>,
      timeout,
    );
  return {
    async check(key) {
      try {
        const [allowed, trial, retryMs] = await call('check', key, randomUUID());
        return allowed === 1
          ? { allowed: true, trial: trial === '' ? null : trial }
          : { allowed: false, retryAfterSeconds: seconds(Number(retryMs)) };
      } catch (error) {
        options.onDegraded(error);
        return local.check(key);
      }
    },
    async report(key, outcome, trial) {
      // The local breaker also learns, so a fallback starts from what this instance saw.
      await local.report(key, outcome, trial);
      try {
        await call('report', key, trial ?? '', outcome);
      } catch (error) {
        options.onDegraded(error);
      }
    },
    async open(key, ms = options.openMs) {
      await local.open(key, ms);
      try {
        await call('open', key, '', '', ms);
      } catch (error) {
        options.onDegraded(error);
      }
    },
    async snapshot() {
      try {
        const rows = (await withTimeout(
          redis.eval(SNAPSHOT_LUA, 1, setKey, `${prefix}breaker:`),
          timeout,
        )) as string[][];
        const now = options.now();
        return rows.map(([key, failures, openUntil, trialUntil, lastSuccess, lastFailure]) =>
          view(
            key as string,
            {
              failures: Number(failures),
              openUntil: Number(openUntil),
              trialUntil: Number(trialUntil),
              trialToken: '',
              lastSuccessAt: Number(lastSuccess),
              lastFailureAt: Number(lastFailure),
            },
            now,
          ),
        );
      } catch (error) {
        options.onDegraded(error);
        return local.snapshot();
      }
    },
  };
}
