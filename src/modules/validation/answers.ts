import type { RegistryAnswersTable } from '../../db/schema.js';
import type { ClaimedIdentity, RegistryVerdicts } from '../identity-match/index.js';
import type { ParsedVatNumber } from '../vat-numbers/index.js';
import type { FallbackMeta, SourceStatus, ValidationSource } from './sources.js';

/**
 * Where validation answers come from: the live registries (behind cache and resilience) or the
 * test-mode table. Both give the same values, so the service shapes responses the same way.
 */
/**
 * An abort signal, or a function that makes it when a registry is first asked: answers from the
 * store or the test table never need one, and an `AbortController` per request was 5% of a
 * test-key validation's CPU profile (`npm run bench -- paid`, 2026-11-28).
 */
export type LazySignal = AbortSignal | (() => AbortSignal);

export interface AnswerQuery {
  vat: ParsedVatNumber;
  requester: ParsedVatNumber | null;
  /**
   * The API key asking. A look-up with a requester yields a consultation number, which is the record
   * of one key's request: concurrent look-ups of the same number and requester share one upstream
   * call only when they come from the same key.
   */
  caller?: string;
  /** `false` forces a live call. */
  useCache: boolean;
  /**
   * Aborts when nobody waits for this answer any more (the client closed its connection, the worker
   * stops): this caller stops waiting, and the registry call is cancelled unless another caller
   * shares it.
   */
  signal?: LazySignal;
  /**
   * A client waits on an open connection: the wait for a registry permit is bounded
   * (`OPENVAT_REGISTRY_PERMIT_WAIT_MS`), so the answer comes before the server's idle timeout.
   * Background work (batch items, monitor checks) waits for its turn instead.
   */
  clientWaiting?: boolean;
  /**
   * `background` callers (monitoring, scheduled re-checks) take a registry permit only when no
   * `interactive` caller waits for the same registry and member state. Default `interactive`.
   */
  priority?: 'interactive' | 'background';
  /**
   * What the customer claims (only non-blank fields): sent to a registry that compares it (VIES),
   * whose verdicts come back as `verdicts`.
   */
  claim?: ClaimedIdentity;
}

export type AnswerOutcome =
  | {
      kind: 'answer';
      source: ValidationSource;
      sourceStatus: SourceStatus;
      valid: boolean;
      name: string | null;
      address: string | null;
      consultationNumber: string | null;
      /** When the registry gave this answer. */
      checkedAt: Date;
      /** True when the answer was stored earlier (cached or degraded). */
      fromStore: boolean;
      /** The registry's answer to store, when it was asked now. */
      fresh?: RegistryAnswersTable;
      /** The registry's own verdicts on the claimed fields, when it was asked now with them. */
      verdicts?: RegistryVerdicts;
      /** A national register's answer, given because VIES could not answer (never stored as VIES's). */
      fallback?: FallbackMeta;
    }
  | { kind: 'unavailable'; source: ValidationSource; message: string; retryAfterSeconds: number }
  /** The registry refused the requester's VAT number: retrying will not help, the caller must fix it. */
  | { kind: 'requester_rejected'; source: ValidationSource; message: string }
  | { kind: 'rate_limited'; message: string; retryAfterSeconds: number };

export interface AnswerSource {
  answer(query: AnswerQuery): Promise<AnswerOutcome>;
}
