import type { RegistryAnswersTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type {
  RegistryAnswer,
  RegistryClient,
  RegistryStatusReader,
  RegistryTrader,
} from '../../registries/port.js';
import {
  type BreakerStore,
  type Coalescer,
  createCoalescer,
  createLocalBreaker,
  createPermits,
  type Permits,
} from '../../registries/resilience.js';
import { type ClaimedIdentity, verdictsFromTraderMatch } from '../identity-match/index.js';
import type { MetricsObserver } from '../metrics/index.js';
import type { NationalFallbacks } from '../national/index.js';
import type { ParsedVatNumber } from '../vat-numbers/index.js';
import type { AnswerOutcome, AnswerQuery, AnswerSource } from './answers.js';
import { createFallback } from './fallback.js';
import { createGuardedCall, type GuardedResult, type RegistryCall } from './guarded-call.js';
import { fallbackOutcome } from './national-answer.js';
import type { RegistryAnswersRepository } from './repository.js';
import type { ValidationSource } from './sources.js';
import { type AnswerLifetimes, createStoredAnswers } from './stored-answers.js';

export interface LiveAnswersOptions {
  clientFor(prefix: string): RegistryClient | null;
  /** Stored answers (written by the outbox; read here). */
  repository: Pick<RegistryAnswersRepository, 'find'>;
  clock: Clock;
  cache: AnswerLifetimes;
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

/** The caller stopped waiting before the (possibly shared) registry call ended. */
const CALLER_GONE = Symbol('caller gone');

/** The breaker, permits and coalescer: the given shared stores, else kept in this process. */
function resilienceStores(options: LiveAnswersOptions) {
  const breaker =
    options.stores?.breaker ??
    createLocalBreaker({
      ...options.breaker,
      trialMs: options.breaker.trialMs ?? 60_000,
      now: () => options.clock.millis(),
    });
  const permits = options.stores?.permits ?? createPermits({ limitFor: () => options.concurrencyPerCountry });
  const coalescer = options.stores?.coalescer ?? createCoalescer();
  return { breaker, permits, coalescer };
}

/**
 * Which concurrent callers share one registry call. A consultation number belongs to the key that
 * asked for it: never shared with another key. A client's bounded wait never rides on a call that
 * waits without bound (a batch item's), nor the other way round: the two kinds share calls only among
 * themselves. A call comparing a trader's details shares only with the same details.
 */
function coalescingKey(query: AnswerQuery, call: Pick<RegistryCall, 'trader'>): string {
  const kind = query.clientWaiting ? '' : '|unbounded';
  const claim = call.trader ? `|${JSON.stringify(call.trader)}` : '';
  const { vat, requester } = query;
  return requester
    ? `${vat.normalised}|${requester.normalised}|${query.caller ?? ''}${kind}${claim}`
    : `${vat.normalised}|${kind}${claim}`;
}

/** The claimed fields as the registry port sends them (VIES `trader*`). */
function traderOf(claim: ClaimedIdentity): RegistryTrader {
  const trader: RegistryTrader = {};
  for (const field of ['name', 'street', 'postcode', 'city'] as const) {
    const value = claim[field];
    if (value) trader[field] = value;
  }
  return trader;
}

/**
 * Whether a stored answer serves a query that claims company fields: only one holding a registered
 * name or address to compare with; one with neither (VIES `---`) cannot, the registry's verdicts can.
 */
function storedServesClaim(row: RegistryAnswersTable, claim: ClaimedIdentity | undefined): boolean {
  return !claim || row.name !== null || row.address !== null;
}

/** What the metrics call the result of a registry call. */
function callOutcomeName(result: GuardedResult): string {
  if (result.kind === 'answer') return result.valid ? 'valid' : 'invalid';
  if (result.kind === 'refused') return 'circuit_open';
  if (result.kind === 'busy') return 'busy';
  return result.reason;
}

/** The registry's answer, with the row the outbox stores. */
function liveOutcome(result: RegistryAnswer, vat: ParsedVatNumber): AnswerOutcome {
  const fresh: RegistryAnswersTable = {
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
    fresh,
    ...(result.traderMatch ? { verdicts: verdictsFromTraderMatch(result.traderMatch) } : {}),
  };
}

/** Why VIES gave no answer, as `meta.fallback.reason` and `message` name it. */
function viesFailure(result: Exclude<GuardedResult, { kind: 'answer' }>): { code: string; message: string } {
  if (result.kind === 'busy') return { code: 'busy', message: 'every permitted call to VIES is taken' };
  if (result.kind === 'refused')
    return { code: 'circuit_open', message: 'VIES failed repeatedly, so calls are paused (circuit open)' };
  return { code: result.upstreamCode ?? result.reason, message: result.message };
}

/**
 * Live answers: a stored answer within its TTL (`stored-answers.ts`), otherwise the registry — through
 * request coalescing and the guarded call (`guarded-call.ts`: breaker, permits, retries inside a
 * deadline). When the registry cannot answer, the fallback (`fallback.ts`) serves a stored answer
 * within the degraded window as `degraded`, else `unavailable`. Never `valid: false`.
 */
export function createLiveAnswers(options: LiveAnswersOptions): AnswerSource & {
  breaker: BreakerStore;
  permits: Permits;
  /** Opens the breaker of each VIES member state the status endpoint reports as unavailable. */
  applyStatus(reader: RegistryStatusReader): Promise<void>;
  /** Keeps committed answers in memory (called by the outbox after the commit). */
  remember(answers: readonly RegistryAnswersTable[]): void;
  /** Whether a stored answer for this (normalised) number is within its TTL: it would be served. */
  hasFresh(vatNumber: string, claimed?: boolean): Promise<boolean>;
} {
  const { breaker, permits, coalescer } = resilienceStores(options);
  const permitWaitMs = options.permitWaitMs ?? 5_000;
  const storedAnswers = createStoredAnswers({
    repository: options.repository,
    clock: options.clock,
    lifetimes: options.cache,
  });
  const { guardedCall } = createGuardedCall({
    breaker,
    permits,
    deadlineMs: options.deadlineMs,
    permitWaitMs,
    backoffBaseMs: options.backoffBaseMs,
    ...(options.random ? { random: options.random } : {}),
    ...(options.sleep ? { sleep: options.sleep } : {}),
  });
  const fallback = createFallback({ storedAnswers, permitWaitMs });

  /** The registry call this query makes, but for the signal (the coalescer's, once shared). */
  function callFor(query: AnswerQuery, client: RegistryClient): Omit<RegistryCall, 'signal'> {
    return {
      client,
      key: `${client.source}:${query.vat.country}`,
      vat: query.vat,
      requester: query.requester,
      priority: query.priority ?? 'interactive',
      clientWaiting: query.clientWaiting === true,
      ...(query.claim ? { trader: traderOf(query.claim) } : {}),
    };
  }

  /**
   * The guarded call, shared by the concurrent callers of its coalescing key and run under the
   * coalescer's signal (cancelled once every caller has gone); reported to the metrics.
   */
  async function sharedCall(
    query: AnswerQuery,
    call: Omit<RegistryCall, 'signal'>,
  ): Promise<GuardedResult | typeof CALLER_GONE> {
    const started = performance.now();
    const signal = typeof query.signal === 'function' ? query.signal() : query.signal;
    let result: GuardedResult;
    try {
      result = await coalescer.run(
        coalescingKey(query, call),
        (shared) => guardedCall({ ...call, signal: shared }),
        signal,
      );
    } catch (error) {
      if (!signal?.aborted) throw error;
      // This caller went away; a call another caller shares goes on for them.
      return CALLER_GONE;
    }
    options.observer?.registryCall({
      registry: call.client.source,
      country: query.vat.country,
      outcome: callOutcomeName(result),
      durationMs: performance.now() - started,
    });
    return result;
  }

  async function answer(query: AnswerQuery): Promise<AnswerOutcome> {
    const { vat, requester } = query;
    const client = options.clientFor(vat.country);
    if (!client) return fallback.noRegistry(vat);
    const stored = await storedAnswers.storedAnswer(vat.normalised);
    if (
      query.useCache &&
      !requester &&
      stored &&
      storedAnswers.isFresh(stored) &&
      storedServesClaim(stored, query.claim)
    )
      return storedAnswers.storedOutcome(stored, 'cached');
    const result = await sharedCall(query, callFor(query, client));
    if (result === CALLER_GONE) return fallback.callerGone(client.source, vat);
    if (result.kind === 'answer') return liveOutcome(result, vat);
    const registered = await viaRegister(client.source, query, result);
    if (registered) return registered;
    return fallback.onRegistryFailure(result, { source: client.source, vat, requester, stored });
  }

  async function applyStatus(reader: RegistryStatusReader): Promise<void> {
    const status = await reader.checkStatus();
    if (!status) return;
    for (const [country, state] of Object.entries(status)) {
      if (!state.available) await breaker.open(`vies:${country}`);
    }
  }

  /**
   * The member state's own register when VIES could not answer (`null`: none is asked, or it could
   * not answer either). A request VIES refuses (its input, our requester) is no outage: no register
   * is asked then.
   */
  async function viaRegister(
    source: ValidationSource,
    query: AnswerQuery,
    result: Exclude<GuardedResult, { kind: 'answer' }>,
  ): Promise<AnswerOutcome | null> {
    if (source !== 'vies' || !options.national?.covers(query.vat.country)) return null;
    if (result.kind === 'unavailable' && (result.reason === 'rejected' || result.reason === 'not_configured'))
      return null;
    const signal = typeof query.signal === 'function' ? query.signal() : query.signal;
    const asked = await options.national.ask({
      vat: query.vat,
      failure: viesFailure(result),
      ...(signal ? { signal } : {}),
      ...(query.priority ? { priority: query.priority } : {}),
    });
    return asked.kind === 'answer' ? fallbackOutcome(asked.answer, asked.failure) : null;
  }

  return {
    breaker,
    permits,
    answer,
    applyStatus,
    remember: storedAnswers.remember,
    hasFresh: async (vatNumber: string, claimed = false) => {
      const row = await storedAnswers.storedAnswer(vatNumber);
      return row !== null && storedAnswers.isFresh(row) && (!claimed || storedServesClaim(row, {}));
    },
  };
}

export type LiveAnswers = ReturnType<typeof createLiveAnswers>;
