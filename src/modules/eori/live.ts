/**
 * Live EORI answers: a stored answer within its TTL, otherwise the service that holds the number
 * (the Commission's EOS for EU and XI numbers, HMRC for GB ones), asked in requests of at most 10
 * numbers through request coalescing, one concurrency limit and one circuit breaker per service
 * (keys `eos` and `hmrc_eori`, shared through Redis when it is configured), with retries of
 * throttled requests inside a deadline. When a service cannot answer, a stored answer within the
 * degraded window is served as `degraded`; without one the number is `unavailable`. Never
 * `valid: false` but on the service's own answer for that number.
 */
import type { EoriAnswersTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { EoriClient, EoriResult, EoriTrader } from '../../registries/eori-port.js';
import {
  type BreakerStore,
  backoffDelay,
  type CallOutcome,
  type Coalescer,
  outcomeOfReason,
  type Permit,
  type Permits,
} from '../../registries/resilience.js';
import type { MetricsObserver } from '../metrics/index.js';
import { planEoriBatch } from './batch.js';
import type { EoriService } from './countries.js';
import type { ParsedEori } from './parse.js';
import type { EoriAnswersRepository } from './repository.js';
import type { EoriAnswerOptions, EoriAnswerOutcome, EoriAnswerSource } from './types.js';

/** The breaker and permit key of each service, as `GET /v1/status` and the metrics name it. */
export const EORI_SERVICE_KEYS: Readonly<Record<EoriService, string>> = Object.freeze({
  eos: 'eos',
  hmrc: 'hmrc_eori',
});

const SERVICE_NAMES: Record<EoriService, string> = {
  eos: "the Commission's EOS service",
  hmrc: "HMRC's EORI service",
};

/** What one upstream request of a service came to, as shared by coalesced callers. */
export type EoriCallResult =
  | { kind: 'results'; results: EoriResult[] }
  /** The breaker is open: the service was not asked. */
  | { kind: 'refused'; retryAfterSeconds: number }
  /** No permit came free within the wait a waiting client allows: the service was not asked. */
  | { kind: 'busy' };

export interface EoriLiveOptions {
  clients: Readonly<Record<EoriService, EoriClient>>;
  repository: Pick<EoriAnswersRepository, 'findMany'>;
  clock: Clock;
  cache: { validTtlSeconds: number; invalidTtlSeconds: number; degradedWindowSeconds: number };
  stores: { breaker: BreakerStore; permits: Permits; coalescer: Coalescer };
  /** How long a request waits for a free call to a service before the service counts as busy. */
  permitWaitMs: number;
  /** How long one request may spend retrying a throttling service. */
  deadlineMs: number;
  /** Base of the jittered backoff between those retries. */
  backoffMs: number;
  observer?: Pick<MetricsObserver, 'registryCall'>;
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const sleepReal = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What a request's results say of the service's health: any answer, throttling or a refusal means it is up. */
export function eoriCallOutcome(results: readonly EoriResult[]): CallOutcome {
  if (results.some((result) => result.kind === 'answer')) return 'success';
  const first = results[0];
  return !first || first.kind === 'answer' ? 'success' : outcomeOfReason(first.reason);
}

function traderColumns(trader: EoriTrader | null) {
  return {
    name: trader?.name ?? null,
    street: trader?.street ?? null,
    postal_code: trader?.postalCode ?? null,
    city: trader?.city ?? null,
    country: trader?.country ?? null,
  };
}

function traderOf(row: EoriAnswersTable): EoriTrader | null {
  const trader: EoriTrader = {
    name: row.name,
    street: row.street,
    postalCode: row.postal_code,
    city: row.city,
    country: row.country,
  };
  return Object.values(trader).some((value) => value !== null) ? trader : null;
}

export function createEoriLiveAnswers(
  options: EoriLiveOptions,
): EoriAnswerSource & { hasFresh(eori: string): Promise<boolean> } {
  const { clients, repository, clock, cache, stores } = options;
  const { breaker, permits, coalescer } = stores;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? sleepReal;

  const ageSeconds = (row: EoriAnswersTable) => (clock.millis() - Date.parse(row.checked_at)) / 1000;
  const ttl = (row: EoriAnswersTable) => (row.valid === 1 ? cache.validTtlSeconds : cache.invalidTtlSeconds);

  function fromStore(row: EoriAnswersTable, status: 'cached' | 'degraded'): EoriAnswerOutcome {
    return {
      kind: 'answer',
      source: row.source === 'hmrc' ? 'hmrc' : 'eos',
      sourceStatus: status,
      valid: row.valid === 1,
      trader: row.valid === 1 ? traderOf(row) : null,
      checkedAt: new Date(row.checked_at),
      fromStore: true,
    };
  }

  /** A stored answer within the degraded window, else `unavailable` naming the service and why. */
  function fallback(
    row: EoriAnswersTable | undefined,
    service: EoriService,
    eori: string,
    why: string,
    retryAfterSeconds: number,
  ): EoriAnswerOutcome {
    if (row && ageSeconds(row) <= ttl(row) + cache.degradedWindowSeconds) return fromStore(row, 'degraded');
    return {
      kind: 'unavailable',
      source: service,
      message: `No answer from ${SERVICE_NAMES[service]} for ${eori}: ${why.replace(/\.$/, '')}.`,
      retryAfterSeconds,
    };
  }

  async function permitWithin(key: string, waitMs: number, signal: AbortSignal): Promise<Permit | null> {
    const bound = new AbortController();
    const timer = setTimeout(() => bound.abort(), waitMs);
    try {
      return await permits.acquire(key, { signal: AbortSignal.any([signal, bound.signal]) });
    } catch (error) {
      if (bound.signal.aborted && !signal.aborted) return null;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** One request (at most 10 numbers), retried while the service throttles and the deadline allows. */
  async function callWithRetries(
    service: EoriService,
    eoris: string[],
    signal: AbortSignal,
  ): Promise<EoriCallResult> {
    const key = EORI_SERVICE_KEYS[service];
    const deadline = Date.now() + options.deadlineMs;
    let last: EoriResult[] | null = null;
    for (let attempt = 0; ; attempt++) {
      const waitMs =
        attempt === 0
          ? options.permitWaitMs
          : Math.min(options.permitWaitMs, Math.max(0, deadline - Date.now()));
      const permit = await permitWithin(key, waitMs, signal);
      if (!permit) return last ? { kind: 'results', results: last } : { kind: 'busy' };
      let results: EoriResult[];
      try {
        results = await clients[service].check({ eoris, signal });
      } finally {
        permit.release();
      }
      last = results;
      const throttled = results.some((r) => r.kind === 'unavailable' && r.reason === 'throttled');
      if (!throttled) return { kind: 'results', results };
      permits.throttled(key);
      const delay = backoffDelay(attempt, options.backoffMs, 5_000, random);
      if (Date.now() + delay >= deadline || signal.aborted) return { kind: 'results', results };
      await sleep(delay);
      if (signal.aborted) return { kind: 'results', results };
    }
  }

  /** The request behind the service's breaker; every outcome is reported to it. */
  async function guarded(
    service: EoriService,
    eoris: string[],
    signal: AbortSignal,
  ): Promise<EoriCallResult> {
    const key = EORI_SERVICE_KEYS[service];
    const gate = await breaker.check(key);
    if (!gate.allowed) return { kind: 'refused', retryAfterSeconds: gate.retryAfterSeconds };
    let result: EoriCallResult;
    try {
      result = await callWithRetries(service, eoris, signal);
    } catch (error) {
      await breaker.report(key, signal.aborted ? 'neutral' : 'failure', gate.trial);
      const message = signal.aborted
        ? 'the request was abandoned before the service answered'
        : `the request failed unexpectedly (${error instanceof Error ? error.name : 'error'})`;
      return {
        kind: 'results',
        results: eoris.map((eori) => ({
          kind: 'unavailable',
          source: service,
          eori,
          reason: signal.aborted ? 'timeout' : 'down',
          retryable: true,
          message,
        })),
      };
    }
    const neutral = result.kind === 'busy' || signal.aborted;
    await breaker.report(
      key,
      neutral ? 'neutral' : result.kind === 'results' ? eoriCallOutcome(result.results) : 'neutral',
      gate.trial,
    );
    return result;
  }

  /** One planned request, shared with concurrent callers asking the same numbers. */
  async function ask(
    service: EoriService,
    eoris: string[],
    signal: AbortSignal | undefined,
  ): Promise<EoriCallResult> {
    const started = performance.now();
    let result: EoriCallResult;
    try {
      result = await coalescer.run(
        `eori:${service}:${eoris.join(',')}`,
        (shared) => guarded(service, eoris, shared),
        signal,
      );
    } catch (error) {
      if (!signal?.aborted) throw error;
      return {
        kind: 'results',
        results: eoris.map((eori) => ({
          kind: 'unavailable',
          source: service,
          eori,
          reason: 'timeout',
          retryable: true,
          message: 'the caller went away before the service answered',
        })),
      };
    }
    observe(service, eoris, result, performance.now() - started);
    return result;
  }

  function observe(service: EoriService, eoris: string[], result: EoriCallResult, durationMs: number) {
    if (!options.observer) return;
    eoris.forEach((eori, at) => {
      const item = result.kind === 'results' ? result.results[at] : undefined;
      const outcome =
        result.kind === 'refused'
          ? 'circuit_open'
          : result.kind === 'busy'
            ? 'busy'
            : !item
              ? 'bad_response'
              : item.kind === 'answer'
                ? item.valid
                  ? 'valid'
                  : 'invalid'
                : item.reason;
      options.observer?.registryCall({
        registry: EORI_SERVICE_KEYS[service],
        country: eori.slice(0, 2),
        outcome,
        durationMs,
      });
    });
  }

  /** The outcome of one number from its request's result. */
  function outcomeOf(
    service: EoriService,
    eori: string,
    result: EoriCallResult,
    row: EoriAnswersTable | undefined,
  ): EoriAnswerOutcome {
    const permitWaitS = Math.max(1, Math.ceil(options.permitWaitMs / 1000));
    if (result.kind === 'busy') {
      return fallback(row, service, eori, 'every permitted call to it is taken; retry shortly', permitWaitS);
    }
    if (result.kind === 'refused') {
      return fallback(
        row,
        service,
        eori,
        'it failed repeatedly, so calls are paused for now (circuit open); retry later',
        result.retryAfterSeconds,
      );
    }
    const item = result.results.find((r) => r.eori === eori);
    if (!item) return fallback(row, service, eori, 'the service gave no result for it', 60);
    if (item.kind === 'unavailable') {
      const retryAfter = item.retryAfterSeconds ?? (item.reason === 'throttled' ? 5 : 60);
      return fallback(row, service, eori, item.message, retryAfter);
    }
    const fresh: EoriAnswersTable = {
      eori,
      source: service,
      valid: item.valid ? 1 : 0,
      ...traderColumns(item.valid ? item.trader : null),
      upstream_status: item.upstreamStatus.slice(0, 64),
      checked_at: item.checkedAt.toISOString(),
    };
    return {
      kind: 'answer',
      source: service,
      sourceStatus: 'live',
      valid: item.valid,
      trader: item.valid ? item.trader : null,
      checkedAt: item.checkedAt,
      fromStore: false,
      fresh,
    };
  }

  async function answerMany(
    numbers: readonly ParsedEori[],
    answerOptions: EoriAnswerOptions,
  ): Promise<Map<string, EoriAnswerOutcome>> {
    const distinct = [...new Map(numbers.map((n) => [n.eori, n])).values()];
    const rows = new Map((await repository.findMany(distinct.map((n) => n.eori))).map((r) => [r.eori, r]));
    const outcomes = new Map<string, EoriAnswerOutcome>();
    const needed: string[] = [];
    for (const number of distinct) {
      const row = rows.get(number.eori);
      if (answerOptions.useCache && row && ageSeconds(row) <= ttl(row))
        outcomes.set(number.eori, fromStore(row, 'cached'));
      else needed.push(number.eori);
    }
    if (needed.length === 0) return outcomes;
    const { calls } = planEoriBatch(needed);
    const signal = typeof answerOptions.signal === 'function' ? answerOptions.signal() : answerOptions.signal;
    const results = await Promise.all(calls.map((call) => ask(call.service, call.eoris, signal)));
    calls.forEach((call, at) => {
      const result = results[at] as EoriCallResult;
      for (const eori of call.eoris)
        outcomes.set(eori, outcomeOf(call.service, eori, result, rows.get(eori)));
    });
    return outcomes;
  }

  /** Whether a stored answer within its TTL would answer this (canonical) number without a call. */
  async function hasFresh(eori: string): Promise<boolean> {
    const [row] = await repository.findMany([eori]);
    return row !== undefined && ageSeconds(row) <= ttl(row);
  }

  return { answerMany, hasFresh };
}
