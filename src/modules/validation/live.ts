import { LRUCache } from 'lru-cache';
import type { RegistryAnswersTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type {
  RegistryClient,
  RegistryResult,
  RegistryStatusReader,
  RegistryUnavailable,
} from '../../registries/port.js';
import {
  backoffDelay,
  createCoalescer,
  createKeyedBreaker,
  createKeyedLimiter,
} from '../../registries/resilience.js';
import type { ParsedVatNumber } from '../vat-numbers/index.js';
import type { AnswerOutcome, AnswerQuery, AnswerSource } from './answers.js';
import type { RegistryAnswersRepository } from './repository.js';
import type { ValidationSource } from './types.js';

export interface LiveAnswersOptions {
  clientFor(prefix: string): RegistryClient | null;
  repository: RegistryAnswersRepository;
  clock: Clock;
  cache: { validTtlSeconds: number; invalidTtlSeconds: number; degradedWindowSeconds: number };
  /** Concurrent upstream calls per registry and member state. */
  concurrencyPerCountry: number;
  /** How long one validation may spend retrying throttled calls. */
  deadlineMs: number;
  /** Base of the jittered exponential backoff between retries. */
  backoffBaseMs: number;
  breaker: { failureThreshold: number; openMs: number };
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** Upstream codes that mean "busy, try again shortly" rather than "down" or "wrong". */
const RETRYABLE_CODES = new Set([
  'MS_MAX_CONCURRENT_REQ',
  'MS_MAX_CONCURRENT_REQ_TIME',
  'GLOBAL_MAX_CONCURRENT_REQ',
  'GLOBAL_MAX_CONCURRENT_REQ_TIME',
  'TIMEOUT',
  'SERVICE_UNAVAILABLE',
]);

function retryable(result: RegistryUnavailable): boolean {
  return (
    result.reason === 'throttled' ||
    (result.upstreamCode !== undefined && RETRYABLE_CODES.has(result.upstreamCode))
  );
}

/** Failures that say the registry is unhealthy (they open the breaker); throttling and refusals do not. */
function unhealthy(result: RegistryUnavailable): boolean {
  return result.reason === 'down' || result.reason === 'timeout' || result.reason === 'bad_response';
}

const sleepReal = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Live answers: a stored answer within its TTL, otherwise the registry — through request coalescing,
 * a per-country concurrency limiter with retries of throttling errors inside a deadline, and a
 * per-country circuit breaker. When the registry cannot answer, a stored answer within the degraded
 * window is served as `degraded`; without one the answer is `unavailable`. Never `valid: false`.
 */
export function createLiveAnswers(options: LiveAnswersOptions): AnswerSource & {
  breaker: ReturnType<typeof createKeyedBreaker>;
  limiter: ReturnType<typeof createKeyedLimiter>;
  /** Opens the breaker of each VIES member state the status endpoint reports as unavailable. */
  applyStatus(reader: RegistryStatusReader): Promise<void>;
} {
  const { repository, clock, cache } = options;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? sleepReal;
  const memory = new LRUCache<string, RegistryAnswersTable>({ max: 100_000 });
  const limiter = createKeyedLimiter(() => options.concurrencyPerCountry);
  const breaker = createKeyedBreaker({ ...options.breaker, now: () => clock.now().getTime() });
  const coalescer = createCoalescer();

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
    message: string,
    retryAfterSeconds: number,
  ): AnswerOutcome {
    if (row && ageSeconds(row, clock.now()) <= ttl(row) + cache.degradedWindowSeconds)
      return fromStore(row, 'degraded');
    return { kind: 'unavailable', source, message, retryAfterSeconds };
  }

  async function callWithRetries(
    client: RegistryClient,
    key: string,
    vat: ParsedVatNumber,
    requester: ParsedVatNumber | null,
    signal: AbortSignal | undefined,
  ): Promise<RegistryResult> {
    const deadline = Date.now() + options.deadlineMs;
    for (let attempt = 0; ; attempt++) {
      const result = await limiter.run(
        key,
        () =>
          client.lookup({
            vat: { country: vat.country, national: vat.national },
            ...(requester ? { requester: { country: requester.country, national: requester.national } } : {}),
            ...(signal ? { signal } : {}),
          }),
        signal,
      );
      if (result.kind === 'answer' || !retryable(result)) return result;
      const delay = backoffDelay(attempt, options.backoffBaseMs, 5_000, random);
      if (Date.now() + delay >= deadline || signal?.aborted) return result;
      await sleep(delay);
    }
  }

  return {
    breaker,
    limiter,

    async applyStatus(reader) {
      const status = await reader.checkStatus();
      if (!status) return;
      for (const [country, s] of Object.entries(status)) {
        if (!s.available) breaker.open(`vies:${country}`);
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
      const gate = breaker.check(key);
      if (!gate.allowed) {
        return fallback(
          row,
          client.source,
          `The ${vat.country} registry is unavailable (circuit open after repeated failures); retry later.`,
          gate.retryAfterSeconds,
        );
      }

      const result = await coalescer.run(`${vat.normalised}|${requester?.normalised ?? ''}`, () =>
        callWithRetries(client, key, vat, requester, query.signal),
      );

      if (result.kind === 'unavailable') {
        if (unhealthy(result)) breaker.failure(key);
        const retryAfter = result.retryAfterSeconds ?? (result.reason === 'throttled' ? 5 : 60);
        return fallback(row, client.source, result.message, retryAfter);
      }

      breaker.success(key);
      const answer: RegistryAnswersTable = {
        vat_number: vat.normalised,
        source: result.source,
        valid: result.valid ? 1 : 0,
        name: result.name,
        address: result.address,
        checked_at: result.checkedAt.toISOString(),
      };
      memory.set(vat.normalised, answer);
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
        writes: (trx) => repository.upsert(answer, trx),
      };
    },
  };
}

export type LiveAnswers = ReturnType<typeof createLiveAnswers>;
