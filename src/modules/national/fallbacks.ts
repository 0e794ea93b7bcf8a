/**
 * The national registers as fallbacks: when VIES cannot answer for a member state (unavailable,
 * timed out, throttling, its breaker open), the state's own register of VAT payers is asked, with
 * the same care as VIES: one call per number at a time (coalesced), the register's published
 * quota counted before each call, a concurrency limit and a breaker per register, all shared
 * through Redis when it is configured, and a deadline of its own. A register that cannot answer is
 * never an answer: the caller goes on to its stored answer or to "unavailable".
 */
import type {
  NationalAnswer,
  NationalRegistryClient,
  NationalResult,
  NationalSource,
} from '../../registries/national-port.js';
import type { BreakerStore, Coalescer, Permits } from '../../registries/resilience.js';
import type { MetricsObserver } from '../metrics/index.js';
import type { ParsedVatNumber } from '../vat-numbers/index.js';
import type { NationalQuota } from './quota.js';

/** Why VIES did not answer: its code (`MS_UNAVAILABLE`, `timeout`, `circuit_open`, …) and words. */
export interface ViesFailure {
  code: string;
  message: string;
}

export interface FallbackQuery {
  vat: ParsedVatNumber;
  failure: ViesFailure;
  signal?: AbortSignal;
  priority?: 'interactive' | 'background';
}

export type FallbackResult =
  | { kind: 'answer'; answer: NationalAnswer; failure: ViesFailure }
  /** No register is configured for the state, or the register could not answer (`message` says why). */
  | { kind: 'none'; source: NationalSource | null; message: string | null };

/** The last call of a register, for `GET /v1/status`. */
export interface RegisterActivity {
  lastAnswerAt: string | null;
  lastFailureAt: string | null;
  lastFailure: string | null;
}

export interface NationalFallbacks {
  /** Whether a register answers for this VAT prefix (`PL`, `CZ`, …). */
  covers(prefix: string): boolean;
  ask(query: FallbackQuery): Promise<FallbackResult>;
  /** The registers asked as fallbacks, by source. */
  readonly clients: readonly NationalRegistryClient[];
  activity(source: NationalSource): RegisterActivity;
}

export interface NationalFallbacksOptions {
  clients: readonly NationalRegistryClient[];
  breaker: BreakerStore;
  permits: Permits;
  coalescer: Coalescer;
  quota: NationalQuota;
  /** The deadline of one fallback: the permit wait and the call together. */
  timeoutMs: number;
  now: () => Date;
  observer?: Pick<MetricsObserver, 'registryCall'>;
}

/** The breaker, permit and quota key of a register. */
export const registerKey = (source: NationalSource) => `national:${source}`;

type Attempt =
  | { kind: 'result'; result: NationalResult }
  | { kind: 'skipped'; outcome: string; message: string };

function failureOf(attempt: Attempt): string {
  if (attempt.kind === 'skipped') return attempt.message;
  return attempt.result.kind === 'unavailable' ? attempt.result.message : '';
}

export function createNationalFallbacks(options: NationalFallbacksOptions): NationalFallbacks {
  const { breaker, permits, coalescer, quota } = options;
  const byCountry = new Map(options.clients.map((client) => [client.country, client] as const));
  const activities = new Map<NationalSource, RegisterActivity>();

  function covers(prefix: string): boolean {
    return byCountry.has(prefix.toUpperCase());
  }

  function activity(source: NationalSource): RegisterActivity {
    return activities.get(source) ?? { lastAnswerAt: null, lastFailureAt: null, lastFailure: null };
  }

  function record(source: NationalSource, attempt: Attempt) {
    const known = activity(source);
    const at = options.now().toISOString();
    if (attempt.kind === 'result' && attempt.result.kind === 'answer') {
      activities.set(source, { ...known, lastAnswerAt: at });
    } else {
      activities.set(source, { ...known, lastFailureAt: at, lastFailure: failureOf(attempt) });
    }
  }

  /** The register's quota, a permit and the call itself, within `signal`. */
  async function call(
    client: NationalRegistryClient,
    vat: ParsedVatNumber,
    signal: AbortSignal,
    priority: 'interactive' | 'background',
  ): Promise<Attempt> {
    const key = registerKey(client.source);
    let permit: { release(): void };
    try {
      permit = await permits.acquire(key, { priority, signal });
    } catch {
      return {
        kind: 'skipped',
        outcome: 'busy',
        message: `every permitted call to ${client.source} was taken`,
      };
    }
    try {
      const grant = await quota.take(key, client.limits, client.limits.requestsPerLookup ?? 1);
      if (!grant.ok) {
        return {
          kind: 'skipped',
          outcome: 'quota',
          message: `the ${grant.window} quota of ${client.source} is spent (again in ${grant.retryAfterSeconds} s)`,
        };
      }
      const result = await client.lookup({ vat: { country: vat.country, national: vat.national }, signal });
      if (result.kind === 'unavailable' && result.reason === 'throttled') permits.throttled(key);
      return { kind: 'result', result };
    } finally {
      permit.release();
    }
  }

  /** One call behind the register's breaker; every outcome is reported to it. */
  async function guarded(
    client: NationalRegistryClient,
    vat: ParsedVatNumber,
    signal: AbortSignal,
    priority: 'interactive' | 'background',
  ): Promise<Attempt> {
    const key = registerKey(client.source);
    const gate = await breaker.check(key);
    if (!gate.allowed) {
      return {
        kind: 'skipped',
        outcome: 'circuit_open',
        message: `${client.source} failed repeatedly, so calls are paused (circuit open)`,
      };
    }
    let attempt: Attempt;
    try {
      attempt = await call(client, vat, signal, priority);
    } catch (error) {
      await breaker.report(key, signal.aborted ? 'neutral' : 'failure', gate.trial);
      return {
        kind: 'skipped',
        outcome: signal.aborted ? 'timeout' : 'down',
        message: `${client.source} failed unexpectedly (${error instanceof Error ? error.name : 'error'})`,
      };
    }
    const health =
      attempt.kind === 'skipped' || signal.aborted
        ? 'neutral'
        : attempt.result.kind === 'answer' || ['throttled', 'rejected'].includes(attempt.result.reason)
          ? 'success'
          : attempt.result.reason === 'not_configured'
            ? 'neutral'
            : 'failure';
    await breaker.report(key, health, gate.trial);
    return attempt;
  }

  async function ask(query: FallbackQuery): Promise<FallbackResult> {
    const client = byCountry.get(query.vat.country);
    if (!client) return { kind: 'none', source: null, message: null };
    const started = performance.now();
    const deadline = AbortSignal.timeout(options.timeoutMs);
    const signal = query.signal ? AbortSignal.any([query.signal, deadline]) : deadline;
    let attempt: Attempt;
    try {
      attempt = await coalescer.run(
        `national|${client.source}|${query.vat.normalised}`,
        (shared) => guarded(client, query.vat, shared, query.priority ?? 'interactive'),
        signal,
      );
    } catch {
      attempt = {
        kind: 'skipped',
        outcome: 'timeout',
        message: `${client.source} did not answer within ${options.timeoutMs} ms`,
      };
    }
    record(client.source, attempt);
    options.observer?.registryCall({
      registry: client.source,
      country: client.country,
      outcome:
        attempt.kind === 'skipped'
          ? attempt.outcome
          : attempt.result.kind === 'answer'
            ? attempt.result.valid
              ? 'valid'
              : 'invalid'
            : attempt.result.reason,
      durationMs: performance.now() - started,
    });
    if (attempt.kind === 'result' && attempt.result.kind === 'answer') {
      return { kind: 'answer', answer: attempt.result, failure: query.failure };
    }
    return { kind: 'none', source: client.source, message: failureOf(attempt) };
  }

  return { covers, ask, clients: options.clients, activity };
}
