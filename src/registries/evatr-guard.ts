/**
 * eVatR behind the same resilience as the other registries: one circuit breaker and one
 * concurrency limit (key `evatr`), shared through Redis when it is configured. The client itself
 * makes one attempt per call; this wrapper never retries either.
 */
import type { EvatrClient, EvatrResult } from './evatr.js';
import type { BreakerStore, CallOutcome, Permits } from './resilience.js';

export const EVATR_KEY = 'evatr';

/**
 * Any status the authority sends means it is up (its "unavailable" statuses mostly concern one
 * member state's register, not the authority); network errors, timeouts and unreadable bodies count
 * as failures.
 */
export function evatrOutcome(result: EvatrResult): CallOutcome {
  return result.kind === 'failure' ? 'failure' : 'success';
}

export function guardEvatr(
  client: EvatrClient,
  deps: { breaker: BreakerStore; permits: Permits },
): EvatrClient {
  return {
    async confirm(request) {
      const gate = await deps.breaker.check(EVATR_KEY);
      if (!gate.allowed) {
        return {
          kind: 'failure',
          reason: 'circuit_open',
          message: `the authority failed repeatedly; calls resume in ${gate.retryAfterSeconds} s`,
          retryAfterSeconds: gate.retryAfterSeconds,
          raw: { url: '', requestBody: '', responseBody: null, httpStatus: null, contentType: null },
        };
      }
      let result: EvatrResult;
      try {
        result = await deps.permits.run(EVATR_KEY, () => client.confirm(request));
      } catch (error) {
        await deps.breaker.report(EVATR_KEY, 'failure', gate.trial);
        throw error;
      }
      await deps.breaker.report(EVATR_KEY, evatrOutcome(result), gate.trial);
      return result;
    },
  };
}
