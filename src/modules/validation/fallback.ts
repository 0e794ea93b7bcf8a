import type { RegistryAnswersTable } from '../../db/schema.js';
import type { RegistryUnavailable } from '../../registries/port.js';
import type { ParsedVatNumber } from '../vat-numbers/index.js';
import type { AnswerOutcome } from './answers.js';
import type { Busy, Refused } from './guarded-call.js';
import type { StoredAnswers } from './stored-answers.js';
import type { ValidationSource } from './types.js';

const REGISTRY_NAMES: Record<string, string> = {
  vies: 'VIES',
  hmrc: 'HMRC',
  bfs: 'the Swiss UID register',
  brreg: 'Brønnøysund',
};

function registryName(source: string): string {
  return REGISTRY_NAMES[source] ?? source;
}

/** Why the registry gave no answer: it failed, the breaker refused the call, or no permit came free. */
export type RegistryFailure = RegistryUnavailable | Refused | Busy;

/** What the live path knows when the registry gives no answer. */
export interface FailedLookup {
  source: ValidationSource;
  vat: ParsedVatNumber;
  requester: ParsedVatNumber | null;
  /** The stored answer of the number, whatever its age. */
  stored: RegistryAnswersTable | null;
}

/**
 * The degraded fallback: when the registry cannot answer, a stored answer within the degraded window
 * is served as `degraded`; without one the answer is `unavailable`, naming the registry and the
 * member state. Never `valid: false`.
 */
export function createFallback(deps: {
  storedAnswers: Pick<StoredAnswers, 'servableDegraded' | 'storedOutcome'>;
  /** How long a waiting client waits for a registry permit (named in a busy registry's message). */
  permitWaitMs: number;
}) {
  const { storedAnswers, permitWaitMs } = deps;

  function degradedOrUnavailable(
    lookup: FailedLookup,
    message: string,
    retryAfterSeconds: number,
  ): AnswerOutcome {
    const row = lookup.stored;
    if (row && storedAnswers.servableDegraded(row)) return storedAnswers.storedOutcome(row, 'degraded');
    // Every registry error names the registry and the member state it was asked about.
    const detail = message.replace(/\.$/, '');
    return {
      kind: 'unavailable',
      source: lookup.source,
      message: `No answer from ${registryName(lookup.source)} for ${lookup.vat.country}: ${detail}.`,
      retryAfterSeconds,
    };
  }

  /**
   * The answer when the registry gave none. (A fallback to another source, such as a national
   * register, belongs here: before the stored answer is served as degraded.)
   */
  async function onRegistryFailure(failure: RegistryFailure, lookup: FailedLookup): Promise<AnswerOutcome> {
    switch (failure.kind) {
      case 'busy':
        return degradedOrUnavailable(
          lookup,
          `every permitted call to it is taken and none came free within ${permitWaitMs} ms; retry shortly`,
          Math.max(1, Math.ceil(permitWaitMs / 1000)),
        );
      case 'refused':
        return degradedOrUnavailable(
          lookup,
          'it failed repeatedly, so calls are paused for now (circuit open); retry later',
          failure.retryAfterSeconds,
        );
      case 'unavailable': {
        // The registry refused our requester: the caller's error, which no stored answer or retry fixes.
        if (lookup.requester && failure.upstreamCode === 'INVALID_REQUESTER_INFO') {
          return { kind: 'requester_rejected', source: lookup.source, message: failure.message };
        }
        const retryAfter = failure.retryAfterSeconds ?? (failure.reason === 'throttled' ? 5 : 60);
        return degradedOrUnavailable(lookup, failure.message, retryAfter);
      }
    }
  }

  /** No registry covers the number's country. */
  function noRegistry(vat: ParsedVatNumber): AnswerOutcome {
    return {
      kind: 'unavailable',
      source: 'vies',
      message: `No registry covers ${vat.country}.`,
      retryAfterSeconds: 3600,
    };
  }

  /** This caller went away before the registry answered (a call another caller shares goes on for them). */
  function callerGone(source: ValidationSource, vat: ParsedVatNumber): AnswerOutcome {
    return {
      kind: 'unavailable',
      source,
      message: `No answer from ${registryName(source)} for ${vat.country}: the caller went away before it answered.`,
      retryAfterSeconds: 1,
    };
  }

  return { onRegistryFailure, noRegistry, callerGone };
}
