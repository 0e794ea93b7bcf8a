import type { BatchItemsTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { backoffDelay } from '../../registries/resilience.js';
import type { ClaimedIdentity } from '../identity-match/index.js';
import { type KeyState, principalOfStoredWork } from '../keys/index.js';
import type { Outbox } from '../outbox/index.js';
import { type PeppolPart, type PeppolPort, parseInclude, peppolPart } from '../peppol/index.js';
import {
  answerRefusal,
  registryUnavailable,
  type ValidationOutcome,
  type ValidationService,
} from '../validation/index.js';
import { cancelReasonOf, type JobStore } from './jobs.js';
import type { BatchJob, BatchRepository, ItemFinish } from './repository.js';
import { itemResult, withPeppol } from './results.js';
import type { ItemScheduler } from './scheduler.js';

const RETRY_CAP_MS = 5 * 60_000;

/** An item's stored claim (JSON written by `createJob`). */
function storedClaim(json: string): ClaimedIdentity {
  return JSON.parse(json) as ClaimedIdentity;
}

/** Whether a job asked for the Peppol part of its items (`"include": ["peppol"]`). */
function includesPeppol(include: string | null): boolean {
  if (include === null) return false;
  const parsed = parseInclude(include);
  return parsed.ok && parsed.peppol;
}
/**
 * Finished items are written in groups of up to 200 per transaction, and an item waits 10 ms for
 * others before its group is written: items finish one by one as their registry answers arrive, and
 * without the wait nearly every group would hold one item and cost a commit of its own.
 */
const ITEM_GROUPS = { maxUnits: 200, delayMs: 10 };

/**
 * Works claimed batch items: validates each through the one validation path, retries an unavailable
 * registry with backoff until the retry deadline, records the result with its registry answer, and
 * finishes the job when this was the last item held of it. An item of a job whose key may no longer
 * be used is not validated: the job is cancelled instead.
 */
export function createItemProcessor(deps: {
  repository: BatchRepository;
  validation: Pick<ValidationService, 'validate'>;
  /** The Peppol look-up, for the items of a job that asked for it. */
  peppol: PeppolPort;
  /** Records finished items (in groups). */
  outbox: Pick<Outbox, 'lane'>;
  jobs: Pick<JobStore, 'loadJob' | 'finishIfDone' | 'cancelJob'>;
  /** Whether the key that created a job may still be used (cached by the keys module, not read per item). */
  keyState: (keyId: string) => Promise<KeyState>;
  scheduler: Pick<ItemScheduler, 'release' | 'holdsItemsOf'>;
  clock: Clock;
  /** Identifies this process's leases. */
  workerId: string;
  retryDeadlineMs: number;
  retryBackoffMs: number;
  onError?: (error: unknown) => void;
  random?: () => number;
}) {
  const { repository, validation, clock, workerId } = deps;
  const random = deps.random ?? Math.random;
  const lane = deps.outbox.lane(ITEM_GROUPS);

  /** Works one claimed item; true when its result was recorded. */
  async function processClaimed(item: BatchItemsTable, signal?: AbortSignal): Promise<boolean> {
    const row = await deps.jobs.loadJob(item.job_id);
    if (!row) return false;
    const stopped = cancelReasonOf(await deps.keyState(row.key_id));
    if (stopped.kind === 'cancelled') {
      // No registry is asked on behalf of a key that may no longer be used (revoked, expired, rolled
      // past its overlap, its account disabled): the job ends here, with its reason.
      await deps.jobs.cancelJob(row.id, stopped.reason);
      return false;
    }
    const validated = await validateItem(item, row, signal);
    if (validated.kind === 'released') return false;
    const { outcome } = validated;
    if (registryUnavailable(outcome) && signal?.aborted) {
      await repository.release([item.id], workerId);
      return false;
    }
    if (registryUnavailable(outcome) && row.mode === 'live' && (await retryLater(item, outcome.message))) {
      return false;
    }
    // The Peppol part of a validated number, when the job asked for it (its outage is the part's error).
    const part =
      outcome.kind === 'ok' && includesPeppol(row.include)
        ? await peppolPart(deps.peppol, item.vat_number, principalOfStoredWork(row), signal ? { signal } : {})
        : null;
    return recordOrRetry(item, outcome, part, signal);
  }

  /**
   * An item's answer from the one validation path; an internal error is an unavailable answer, and
   * an item whose worker is stopping is given back (`released`).
   */
  async function validateItem(
    item: BatchItemsTable,
    row: BatchJob,
    signal: AbortSignal | undefined,
  ): Promise<{ kind: 'validated'; outcome: ValidationOutcome } | { kind: 'released' }> {
    try {
      const outcome = await validation.validate(
        {
          vatNumber: item.vat_number,
          requesterVatNumber: row.requester_vat_number,
          ...(item.claim ? { claim: storedClaim(item.claim) } : {}),
        },
        principalOfStoredWork(row),
        signal,
      );
      return { kind: 'validated', outcome };
    } catch (error) {
      if (signal?.aborted) {
        await repository.release([item.id], workerId);
        return { kind: 'released' };
      }
      deps.onError?.(error);
      return {
        kind: 'validated',
        outcome: answerRefusal({
          kind: 'unavailable',
          source: 'vies',
          message: 'The item could not be validated because of an internal error.',
          retryAfterSeconds: 60,
        }),
      };
    }
  }

  /**
   * Records an item's result. A result the database refuses would otherwise leave the item leased, to
   * be claimed again after the lease as if never tried, for ever. It counts as an attempt instead:
   * retried with backoff until the retry deadline, then ended as unavailable, without the registry's
   * answer.
   */
  async function recordOrRetry(
    item: BatchItemsTable,
    outcome: ValidationOutcome,
    part: PeppolPart | null,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    try {
      return await record(item, outcome, part);
    } catch (error) {
      deps.onError?.(error);
      const message = 'The result of this item could not be stored.';
      if (signal?.aborted || (await retryLater(item, message))) return false;
      return record(
        item,
        answerRefusal({ kind: 'unavailable', source: 'vies', message, retryAfterSeconds: 60 }),
      );
    }
  }

  /**
   * Puts an item back with backoff when its retry deadline (set at its first retry) has not passed;
   * false when it has, and the item is to be ended as it is.
   */
  async function retryLater(item: BatchItemsTable, lastError: string): Promise<boolean> {
    const now = clock.now();
    const until = item.retry_until ?? new Date(now.getTime() + deps.retryDeadlineMs).toISOString();
    if (now.toISOString() >= until) return false;
    const delay = Math.max(1, backoffDelay(item.attempts, deps.retryBackoffMs, RETRY_CAP_MS, random));
    const next = new Date(Math.min(now.getTime() + delay, Date.parse(until))).toISOString();
    await repository.retryItem(item.id, workerId, {
      attempts: item.attempts + 1,
      nextAttemptAt: next,
      retryUntil: until,
      lastError,
    });
    return true;
  }

  /** Records an item's result with the registry's fresh answer; false when another worker took it over. */
  function record(
    item: BatchItemsTable,
    outcome: ValidationOutcome,
    part: PeppolPart | null = null,
  ): Promise<boolean> {
    const result = withPeppol(itemResult(outcome), part);
    const finish: ItemFinish = {
      ok: result.ok,
      result: JSON.stringify(result),
      source: outcome.kind === 'ok' ? `${outcome.meta.source}:${outcome.meta.source_status}` : null,
      finishedAt: clock.now().toISOString(),
    };
    // An item whose lease another worker took over is not recorded (nor its answer).
    return lane.record({
      own: async (trx) => ((await repository.finishItem(item.id, workerId, finish, trx)) ? undefined : false),
      ...(outcome.kind === 'ok' && outcome.fresh ? { answers: [outcome.fresh] } : {}),
    });
  }

  /**
   * Validates one claimed item and records its result with the registry answer (grouped with other
   * items' results). An unavailable registry is retried with backoff until the retry deadline (test
   * keys answer from a fixed table, so they are not retried). The last item this worker holds of a
   * job finishes the job when nothing of it is pending.
   */
  async function processItem(item: BatchItemsTable, signal?: AbortSignal): Promise<void> {
    let finished = false;
    try {
      finished = await processClaimed(item, signal);
    } finally {
      deps.scheduler.release(item);
    }
    if (finished && !deps.scheduler.holdsItemsOf(item.job_id)) await deps.jobs.finishIfDone(item.job_id);
  }

  return { processItem };
}
