import type { RegistryClient, RegistryResult, RegistryTrader } from '../../registries/port.js';
import { type BreakerStore, backoffDelay, type Permit, type Permits } from '../../registries/resilience.js';
import type { ParsedVatNumber } from '../vat-numbers/index.js';
import { outcomeOf, retryable } from './registry-outcomes.js';

/** One registry call as the live path makes it. */
export interface RegistryCall {
  client: RegistryClient;
  /** The breaker and permit key: registry and member state (`vies:DE`). */
  key: string;
  vat: ParsedVatNumber;
  requester: ParsedVatNumber | null;
  /** What the customer says about the trader, for a registry that compares it (VIES). */
  trader?: RegistryTrader;
  signal: AbortSignal;
  priority: 'interactive' | 'background';
  /** A client waits on an open connection: permit waits are bounded. */
  clientWaiting: boolean;
}

/** The result of an upstream call the breaker refused. */
export type Refused = { kind: 'refused'; retryAfterSeconds: number };
/** No permit came free within the wait a waiting client allows: the registry was not asked. */
export type Busy = { kind: 'busy' };

export type GuardedResult = RegistryResult | Refused | Busy;

/** Why a permit wait ended: its bound passed. */
class PermitWaitOver extends Error {}

const sleepReal = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The guarded call: behind the per-country circuit breaker, each attempt under a concurrency permit
 * (waited for within a bound when a client waits), throttling and passing errors retried with
 * jittered backoff inside the deadline.
 */
export function createGuardedCall(deps: {
  breaker: BreakerStore;
  permits: Permits;
  /** How long one validation may spend retrying throttled calls. */
  deadlineMs: number;
  /** How long a waiting client waits for a permit before the registry counts as busy. */
  permitWaitMs: number;
  /** Base of the jittered exponential backoff between retries. */
  backoffBaseMs: number;
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}) {
  const { breaker, permits, deadlineMs, permitWaitMs, backoffBaseMs } = deps;
  const random = deps.random ?? Math.random;
  const sleep = deps.sleep ?? sleepReal;

  /**
   * A permit for `key`, waiting at most `waitMs` when given (`null` once that passes); rejects when
   * `signal` aborts meanwhile.
   */
  async function permitWithin(call: RegistryCall, waitMs: number | null): Promise<Permit | null> {
    const { key, signal, priority } = call;
    if (waitMs === null) return permits.acquire(key, { priority, signal });
    const bound = new AbortController();
    const timer = setTimeout(() => bound.abort(new PermitWaitOver()), waitMs);
    try {
      return await permits.acquire(key, { priority, signal: AbortSignal.any([signal, bound.signal]) });
    } catch (error) {
      if (bound.signal.aborted && !signal.aborted) return null;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * With a client waiting, the wait for a permit is bounded: the first by the permit wait, a retry
   * also by the deadline, so the whole answer fits in max(permit wait, deadline) + timeout.
   */
  function permitWait(call: RegistryCall, attempt: number, deadline: number): number | null {
    if (!call.clientWaiting) return null;
    if (attempt === 0) return permitWaitMs;
    return Math.min(permitWaitMs, Math.max(0, deadline - Date.now()));
  }

  /** One attempt: the registry asked under the permit, which is released whatever happens. */
  async function lookUp(call: RegistryCall, permit: Permit): Promise<RegistryResult> {
    const { vat, requester, trader, signal } = call;
    try {
      return await call.client.lookup({
        vat: { country: vat.country, national: vat.national },
        ...(requester ? { requester: { country: requester.country, national: requester.national } } : {}),
        ...(trader ? { trader } : {}),
        signal,
      });
    } finally {
      permit.release();
    }
  }

  /** Whether to try again after `result`, having waited the backoff (false: `result` stands). */
  async function retryAfter(
    call: RegistryCall,
    result: Exclude<RegistryResult, { kind: 'answer' }>,
    attempt: number,
    deadline: number,
  ): Promise<boolean> {
    // The registry says we send too much: fewer calls at once, for every caller of this key.
    if (result.reason === 'throttled') permits.throttled(call.key);
    if (!retryable(result)) return false;
    const delay = backoffDelay(attempt, backoffBaseMs, 5_000, random);
    if (Date.now() + delay >= deadline || call.signal.aborted) return false;
    await sleep(delay);
    return !call.signal.aborted;
  }

  async function callWithRetries(call: RegistryCall): Promise<RegistryResult | Busy> {
    const deadline = Date.now() + deadlineMs;
    let last: RegistryResult | null = null;
    for (let attempt = 0; ; attempt++) {
      const permit = await permitWithin(call, permitWait(call, attempt, deadline));
      if (!permit) return last ?? { kind: 'busy' };
      const result = await lookUp(call, permit);
      last = result;
      if (result.kind === 'answer') return result;
      if (!(await retryAfter(call, result, attempt, deadline))) return result;
    }
  }

  /** What an exception from the call becomes (an abort, or an unexpected failure). */
  function thrownResult(call: RegistryCall, error: unknown, aborted: boolean): RegistryResult {
    return {
      kind: 'unavailable',
      source: call.client.source,
      reason: aborted ? 'timeout' : 'down',
      retryable: true,
      message: aborted
        ? `The ${call.vat.country} registry call was abandoned before it answered.`
        : `The ${call.vat.country} registry call failed unexpectedly (${error instanceof Error ? error.name : 'error'}).`,
    };
  }

  /**
   * One upstream call behind the breaker; every outcome is reported to it (an exception counts as a
   * failure, an abort hands a half-open trial back), so no breaker stays half-open.
   */
  async function guardedCall(call: RegistryCall): Promise<GuardedResult> {
    const { key, signal } = call;
    const gate = await breaker.check(key);
    if (!gate.allowed) return { kind: 'refused', retryAfterSeconds: gate.retryAfterSeconds };
    let result: RegistryResult | Busy;
    try {
      result = await callWithRetries(call);
    } catch (error) {
      const aborted = signal.aborted;
      await breaker.report(key, aborted ? 'neutral' : 'failure', gate.trial);
      return thrownResult(call, error, aborted);
    }
    // A call cut short by its callers, or never made, says nothing about the registry.
    if (result.kind === 'busy' || (result.kind === 'unavailable' && signal.aborted)) {
      await breaker.report(key, 'neutral', gate.trial);
    } else {
      await breaker.report(key, outcomeOf(result), gate.trial);
    }
    return result;
  }

  return { guardedCall };
}
