import type { RegistryAnswersTable } from '../../db/schema.js';
import { boundedCache } from '../../lib/bounded-cache.js';
import type { Clock } from '../../lib/clock.js';
import type { AnswerOutcome } from './answers.js';
import type { RegistryAnswersRepository } from './repository.js';
import type { ValidationSource } from './types.js';

/** How long a stored answer is served: within its TTL as `cached`, a while after as `degraded`. */
export interface AnswerLifetimes {
  validTtlSeconds: number;
  invalidTtlSeconds: number;
  degradedWindowSeconds: number;
}

/**
 * Stored answers and their lifetimes: registry answers kept in memory over the stored table (written
 * by the outbox, read here), their age against the TTL of their verdict, and how a stored answer is
 * served.
 */
export function createStoredAnswers(deps: {
  repository: Pick<RegistryAnswersRepository, 'find'>;
  clock: Clock;
  lifetimes: AnswerLifetimes;
}) {
  const { repository, clock, lifetimes } = deps;
  const memory = boundedCache<string, RegistryAnswersTable>(100_000);

  /** The stored answer of this (normalised) number: from memory, else from the table (then kept). */
  async function storedAnswer(vatNumber: string): Promise<RegistryAnswersTable | null> {
    const hit = memory.get(vatNumber);
    if (hit) return hit;
    const row = await repository.find(vatNumber);
    if (row) memory.set(vatNumber, row);
    return row ?? null;
  }

  function ageSeconds(row: RegistryAnswersTable): number {
    return (clock.now().getTime() - Date.parse(row.checked_at)) / 1000;
  }

  function ttlSeconds(row: RegistryAnswersTable): number {
    return row.valid === 1 ? lifetimes.validTtlSeconds : lifetimes.invalidTtlSeconds;
  }

  /** Within its TTL: served as `cached` instead of asking the registry. */
  function isFresh(row: RegistryAnswersTable): boolean {
    return ageSeconds(row) <= ttlSeconds(row);
  }

  /** Within its TTL and the degraded window after it: served as `degraded` when the registry cannot answer. */
  function servableDegraded(row: RegistryAnswersTable): boolean {
    return ageSeconds(row) <= ttlSeconds(row) + lifetimes.degradedWindowSeconds;
  }

  function storedOutcome(row: RegistryAnswersTable, status: 'cached' | 'degraded'): AnswerOutcome {
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

  /** Whether a stored answer for this (normalised) number is within its TTL: it would be served. */
  async function hasFresh(vatNumber: string): Promise<boolean> {
    const row = await storedAnswer(vatNumber);
    return row !== null && isFresh(row);
  }

  /** Keeps committed answers in memory (called by the outbox after the commit). */
  function remember(answers: readonly RegistryAnswersTable[]): void {
    for (const answer of answers) {
      const known = memory.get(answer.vat_number);
      // Another call may have committed a newer answer first.
      if (!known || known.checked_at <= answer.checked_at) memory.set(answer.vat_number, answer);
    }
  }

  return { storedAnswer, isFresh, servableDegraded, storedOutcome, hasFresh, remember };
}

export type StoredAnswers = ReturnType<typeof createStoredAnswers>;
