import { LRUCache } from 'lru-cache';
import type { RegistryAnswersTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { RegistryClient, RegistryResult, RegistryStatusReader } from '../../registries/port.js';
import {
  type BreakerStore,
  backoffDelay,
  type Coalescer,
  createCoalescer,
  createLocalBreaker,
  createPermits,
  type Permit,
  type Permits,
} from '../../registries/resilience.js';
import type { MetricsObserver } from '../metrics/index.js';
import { fallbackOutcome } from '../national/answer.js';
import type { NationalFallbacks } from '../national/fallbacks.js';
import type { ParsedVatNumber } from '../vat-numbers/index.js';
import type { AnswerOutcome, AnswerQuery, AnswerSource } from './answers.js';
import { outcomeOf, retryable } from './registry-outcomes.js';
import type { RegistryAnswersRepository } from './repository.js';
import type { ValidationSource } from './types.js';

export { outcomeOf };

export interface LiveAnswersOptions {
  clientFor(prefix: string): RegistryClient | null;
  /** Stored answers (written by the outbox; read here). */
  repository: Pick<RegistryAnswersRepository, 'find'>;
  clock: Clock;
  cache: { validTtlSeconds: number; invalidTtlSeconds: number; degradedWindowSeconds: number };
  /** Concurrent upstream calls per registry and member state. */
  concurrencyPerCountry: number;
  /** How long one validation may spend retrying throttled calls. */
  deadlineMs: number;
  /**
   * How long a caller with a client waiting (`AnswerQuery.clientWaiting`) waits for a registry permit
   * before the registry counts as busy (a degraded answer, or `unavailable`); a retry waits at most
   * until the deadline. Default 5 s.
   */
  permitWaitMs?: number;
  /** Base of the jittered exponential backoff between retries. */
  backoffBaseMs: number;
  breaker: { failureThreshold: number; openMs: number; trialMs?: number };
  /** Shared stores (Redis); default: kept in this process. */
  stores?: { breaker: BreakerStore; permits: Permits; coalescer: Coalescer };
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Told of every registry call (metrics). */
  observer?: Pick<MetricsObserver, 'registryCall'>;
  /** The member states' own registers, asked when VIES cannot answer, before a stored answer. */
  national?: Pick<NationalFallbacks, 'covers' | 'ask'>;
}

/** Upstream codes that mean "busy, try again shortly" rather than "down" or "wrong". */

/** The result of an upstream call the breaker refused. */
type Refused = { kind: 'refused'; retryAfterSeconds: number };
/** No permit came free within the wait a waiting client allows: the registry was not asked. */
type Busy = { kind: 'busy' };

/** Why a permit wait ended: its bound passed. */
class PermitWaitOver extends Error {}

const REGISTRY_NAMES: Record<string, string> = {
  vies: 'VIES',
  hmrc: 'HMRC',
  bfs: 'the Swiss UID register',
  brreg: 'Brønnøysund',
};

const sleepReal = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Live answers: a stored answer within its TTL, otherwise the registry — through request coalescing,
 * a per-country concurrency limiter with retries of throttling errors inside a deadline, and a
 * per-country circuit breaker. When the registry cannot answer, a stored answer within the degraded
 * window is served as `degraded`; without one the answer is `unavailable`. Never `valid: false`.
 */
export function createLiveAnswers(options: LiveAnswersOptions): AnswerSource & {
  breaker: BreakerStore;
  permits: Permits;
  /** Opens the breaker of each VIES member state the status endpoint reports as unavailable. */
  applyStatus(reader: RegistryStatusReader): Promise<void>;
  /** Keeps committed answers in memory (called by the outbox after the commit). */
  remember(answers: readonly RegistryAnswersTable[]): void;
  /** Whether a stored answer for this (normalised) number is within its TTL: it would be served. */
  hasFresh(vatNumber: string): Promise<boolean>;
} {
  const { repository, clock, cache } = options;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? sleepReal;
  const memory = new LRUCache<string, RegistryAnswersTable>({ max: 100_000 });
  const breaker =
    options.stores?.breaker ??
    createLocalBreaker({
      ...options.breaker,
      trialMs: options.breaker.trialMs ?? 60_000,
      now: () => clock.millis(),
    });
  const permits = options.stores?.permits ?? createPermits({ limitFor: () => options.concurrencyPerCountry });
  const coalescer = options.stores?.coalescer ?? createCoalescer();
  const permitWaitMs = options.permitWaitMs ?? 5_000;

  async function stored(vatNumber: string): Promise<RegistryAnswersTable | null> {
    const hit = memory.get(vatNumber);
    if (hit) return hit;
    const row = await repository.find(vatNumber);
    if (row) memory.set(vatNumber, row);
    return row ?? null;
  }

  function ageSeconds(row: RegistryAnswersTable, now: Date): number {
    return (now.getTime() - Date.parse(row.checked_at)) / 1000;
  }

  function ttl(row: RegistryAnswersTable): number {
    return row.valid === 1 ? cache.validTtlSeconds : cache.invalidTtlSeconds;
  }

  function fromStore(row: RegistryAnswersTable, status: 'cached' | 'degraded'): AnswerOutcome {
    return {
      kind: 'answer',
      source: row.source as ValidationSource,
      sourceStatus: status,
      valid: row.valid === 1,
      name: row.name,
      address: row.address,
      consultationNumber: null,
      checkedAt: new Date(row.checked_at),
      fromStore: true,
    };
  }

  function fallback(
    row: RegistryAnswersTable | null,
    source: ValidationSource,
    country: string,
    message: string,
    retryAfterSeconds: number,
  ): AnswerOutcome {
    if (row && ageSeconds(row, clock.now()) <= ttl(row) + cache.degradedWindowSeconds)
      return fromStore(row, 'degraded');
    // Every registry error names the registry and the member state it was asked about.
    const detail = message.replace(/\.$/, '');
    return {
      kind: 'unavailable',
      source,
      message: `No answer from ${REGISTRY_NAMES[source] ?? source} for ${country}: ${detail}.`,
      retryAfterSeconds,
    };
  }

  /**
   * A permit for `key`, waiting at most `waitMs` when given (`null` once that passes); rejects when
   * `signal` aborts meanwhile.
   */
  async function permitWithin(
    key: string,
    waitMs: number | null,
    signal: AbortSignal,
    priority: 'interactive' | 'background',
  ): Promise<Permit | null> {
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

  async function callWithRetries(
    client: RegistryClient,
    key: string,
    vat: ParsedVatNumber,
    requester: ParsedVatNumber | null,
    signal: AbortSignal,
    priority: 'interactive' | 'background',
    clientWaiting: boolean,
  ): Promise<RegistryResult | Busy> {
    const deadline = Date.now() + options.deadlineMs;
    let last: RegistryResult | null = null;
    for (let attempt = 0; ; attempt++) {
      // With a client waiting, the wait for a permit is bounded: the first by the permit wait, a
      // retry also by the deadline, so the whole answer fits in max(permit wait, deadline) + timeout.
      const waitMs = clientWaiting
        ? attempt === 0
          ? permitWaitMs
          : Math.min(permitWaitMs, Math.max(0, deadline - Date.now()))
        : null;
      const permit = await permitWithin(key, waitMs, signal, priority);
      if (!permit) return last ?? { kind: 'busy' };
      let result: RegistryResult;
      try {
        result = await client.lookup({
          vat: { country: vat.country, national: vat.national },
          ...(requester ? { requester: { country: requester.country, national: requester.national } } : {}),
          signal,
        });
      } finally {
        permit.release();
      }
      last = result;
      if (result.kind === 'answer') return result;
      // The registry says we send too much: fewer calls at once, for every caller of this key.
      if (result.reason === 'throttled') permits.throttled(key);
      if (!retryable(result)) return result;
      const delay = backoffDelay(attempt, options.backoffBaseMs, 5_000, random);
      if (Date.now() + delay >= deadline || signal.aborted) return result;
      await sleep(delay);
      if (signal.aborted) return result;
    }
  }

  /**
   * One upstream call behind the breaker; every outcome is reported to it (an exception counts as a
   * failure, an abort hands a half-open trial back), so no breaker stays half-open.
   */
  async function guarded(
    client: RegistryClient,
    key: string,
    vat: ParsedVatNumber,
    requester: ParsedVatNumber | null,
    signal: AbortSignal,
    priority: 'interactive' | 'background',
    clientWaiting: boolean,
  ): Promise<RegistryResult | Refused | Busy> {
    const gate = await breaker.check(key);
    if (!gate.allowed) return { kind: 'refused', retryAfterSeconds: gate.retryAfterSeconds };
    let result: RegistryResult | Busy;
    try {
      result = await callWithRetries(client, key, vat, requester, signal, priority, clientWaiting);
    } catch (error) {
      const aborted = signal.aborted;
      await breaker.report(key, aborted ? 'neutral' : 'failure', gate.trial);
      return {
        kind: 'unavailable',
        source: client.source,
        reason: aborted ? 'timeout' : 'down',
        retryable: true,
        message: aborted
          ? `The ${vat.country} registry call was abandoned before it answered.`
          : `The ${vat.country} registry call failed unexpectedly (${error instanceof Error ? error.name : 'error'}).`,
      };
    }
    // A call cut short by its callers, or never made, says nothing about the registry.
    const neutral = result.kind === 'busy' || (result.kind === 'unavailable' && signal.aborted);
    await breaker.report(key, neutral ? 'neutral' : outcomeOf(result as RegistryResult), gate.trial);
    return result;
  }

  /** The state's own register when VIES could not answer (`null`: none, or it could not answer either). */
  async function viaRegister(
    source: ValidationSource,
    vat: ParsedVatNumber,
    failure: { code: string; message: string },
    query: AnswerQuery,
    signal: AbortSignal | undefined,
  ): Promise<AnswerOutcome | null> {
    if (source !== 'vies' || !options.national?.covers(vat.country)) return null;
    const asked = await options.national.ask({
      vat,
      failure,
      ...(signal ? { signal } : {}),
      ...(query.priority ? { priority: query.priority } : {}),
    });
    return asked.kind === 'answer' ? fallbackOutcome(asked.answer, asked.failure) : null;
  }

  return {
    breaker,
    permits,

    async hasFresh(vatNumber) {
      const row = await stored(vatNumber);
      return row !== null && ageSeconds(row, clock.now()) <= ttl(row);
    },

    remember(answers) {
      for (const answer of answers) {
        const known = memory.get(answer.vat_number);
        // Another call may have committed a newer answer first.
        if (!known || known.checked_at <= answer.checked_at) memory.set(answer.vat_number, answer);
      }
    },

    async applyStatus(reader) {
      const status = await reader.checkStatus();
      if (!status) return;
      for (const [country, state] of Object.entries(status)) {
        if (!state.available) await breaker.open(`vies:${country}`);
      }
    },

    async answer(query: AnswerQuery): Promise<AnswerOutcome> {
      const { vat, requester } = query;
      const client = options.clientFor(vat.country);
      if (!client) {
        return {
          kind: 'unavailable',
          source: 'vies',
          message: `No registry covers ${vat.country}.`,
          retryAfterSeconds: 3600,
        };
      }
      const row = await stored(vat.normalised);
      const now = clock.now();
      if (query.useCache && !requester && row && ageSeconds(row, now) <= ttl(row))
        return fromStore(row, 'cached');

      const key = `${client.source}:${vat.country}`;
      const started = performance.now();
      // A consultation number belongs to the key that asked for it: never shared with another key.
      // A client's bounded wait never rides on a call that waits without bound (a batch item's), nor
      // the other way round: the two kinds share calls only among themselves.
      const kind = query.clientWaiting ? '' : '|unbounded';
      const coalesceKey = requester
        ? `${vat.normalised}|${requester.normalised}|${query.caller ?? ''}${kind}`
        : `${vat.normalised}|${kind}`;
      const signal = typeof query.signal === 'function' ? query.signal() : query.signal;
      let result: RegistryResult | Refused | Busy;
      try {
        // The shared call runs under the coalescer's signal: cancelled once every caller has gone.
        result = await coalescer.run(
          coalesceKey,
          (shared) =>
            guarded(
              client,
              key,
              vat,
              requester,
              shared,
              query.priority ?? 'interactive',
              query.clientWaiting === true,
            ),
          signal,
        );
      } catch (error) {
        if (!signal?.aborted) throw error;
        // This caller went away; a call another caller shares goes on for them.
        return {
          kind: 'unavailable',
          source: client.source,
          message: `No answer from ${REGISTRY_NAMES[client.source] ?? client.source} for ${vat.country}: the caller went away before it answered.`,
          retryAfterSeconds: 1,
        };
      }
      options.observer?.registryCall({
        registry: client.source,
        country: vat.country,
        outcome:
          result.kind === 'answer'
            ? result.valid
              ? 'valid'
              : 'invalid'
            : result.kind === 'refused'
              ? 'circuit_open'
              : result.kind === 'busy'
                ? 'busy'
                : result.reason,
        durationMs: performance.now() - started,
      });
      if (
        result.kind !== 'answer' &&
        // A request VIES refuses (its input, our requester) is no outage: no register is asked.
        !(
          result.kind === 'unavailable' &&
          (result.reason === 'rejected' || result.reason === 'not_configured')
        )
      ) {
        const failure =
          result.kind === 'busy' || result.kind === 'refused'
            ? {
                code: result.kind === 'busy' ? 'busy' : 'circuit_open',
                message:
                  result.kind === 'busy'
                    ? 'every permitted call to VIES is taken'
                    : 'VIES failed repeatedly, so calls are paused (circuit open)',
              }
            : { code: result.upstreamCode ?? result.reason, message: result.message };
        const registered = await viaRegister(client.source, vat, failure, query, signal);
        if (registered) return registered;
      }
      if (result.kind === 'busy') {
        return fallback(
          row,
          client.source,
          vat.country,
          `every permitted call to it is taken and none came free within ${permitWaitMs} ms; retry shortly`,
          Math.max(1, Math.ceil(permitWaitMs / 1000)),
        );
      }
      if (result.kind === 'refused') {
        return fallback(
          row,
          client.source,
          vat.country,
          'it failed repeatedly, so calls are paused for now (circuit open); retry later',
          result.retryAfterSeconds,
        );
      }

      if (result.kind === 'unavailable') {
        // The registry refused our requester: the caller's error, which no stored answer or retry fixes.
        if (requester && result.upstreamCode === 'INVALID_REQUESTER_INFO') {
          return { kind: 'requester_rejected', source: client.source, message: result.message };
        }
        const retryAfter = result.retryAfterSeconds ?? (result.reason === 'throttled' ? 5 : 60);
        return fallback(row, client.source, vat.country, result.message, retryAfter);
      }

      const answer: RegistryAnswersTable = {
        vat_number: vat.normalised,
        source: result.source,
        valid: result.valid ? 1 : 0,
        name: result.name,
        address: result.address,
        checked_at: result.checkedAt.toISOString(),
      };
      // Kept in memory once it is committed (`remember`), not before: an answer never seen by the
      // database must not be served as stored.
      return {
        kind: 'answer',
        source: result.source,
        sourceStatus: 'live',
        valid: result.valid,
        name: result.name,
        address: result.address,
        consultationNumber: result.consultationNumber,
        checkedAt: result.checkedAt,
        fromStore: false,
        fresh: answer,
      };
    },
  };
}

export type LiveAnswers = ReturnType<typeof createLiveAnswers>;
