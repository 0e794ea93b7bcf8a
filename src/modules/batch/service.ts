import type { Db } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import type { KeyState } from '../keys/index.js';
import type { Outbox } from '../outbox/index.js';
import type { PeppolPort } from '../peppol/index.js';
import type { ValidationService } from '../validation/index.js';
import { createItemProcessor } from './item-processor.js';
import { createJobStore } from './jobs.js';
import { ASYNC_BATCH_LIMIT, checkBatchRequest, SYNC_BATCH_LIMIT } from './limits.js';
import type { BatchRepository } from './repository.js';
import { createItemScheduler } from './scheduler.js';
import { createSyncBatch } from './sync-batch.js';

export type { BatchItemBody, BatchItemInput } from './items.js';
export { batchItems } from './items.js';
export type { CancelReason, JobRead, JobStatus, JobView } from './jobs.js';
export { ASYNC_BATCH_LIMIT, SYNC_BATCH_LIMIT } from './limits.js';
export type {
  BatchItemErrorCode,
  BatchItemResult,
  BatchMetaRollup,
  BatchSummary,
  SourceCounts,
} from './results.js';
export { rollup } from './results.js';
export type { ValidatedBatch } from './sync-batch.js';

export interface BatchServiceDeps {
  db: Db;
  repository: BatchRepository;
  validation: Pick<ValidationService, 'validate' | 'parse'>;
  /** The Peppol look-up, for items of a batch with `"include": ["peppol"]`. */
  peppol: PeppolPort;
  /** Records finished items (in groups) and a completed job's audit record and event. */
  outbox: Pick<Outbox, 'record' | 'lane'>;
  clock: Clock;
  ids: IdGenerator;
  /** Identifies this process's leases. */
  workerId: string;
  /** Whether the key that created a job may still be used (the jobs of a key that may not are cancelled). */
  keyState: (keyId: string) => Promise<KeyState>;
  /** Days an ended job and its items are kept after it ended. */
  jobRetentionDays: number;
  leaseMs: number;
  retryDeadlineMs: number;
  retryBackoffMs: number;
  /** Items of one country a worker keeps in flight (enough to keep that country's limiter busy). */
  perCountryInFlight: number;
  /**
   * While items are in flight, a claim waits until this many slots are free, so a busy worker claims
   * in groups instead of once per finished item (default 1).
   */
  minClaim?: number;
  /** Called when new items were queued (wakes the worker). */
  onQueued?: () => void;
  onError?: (error: unknown) => void;
  random?: () => number;
}

/**
 * Batch validation: a synchronous batch of up to 100 numbers (`sync-batch.ts`), and durable batch
 * jobs of up to 10,000 (`jobs.ts`) worked by leased items: `scheduler.ts` decides which items this
 * worker takes, `item-processor.ts` validates and records each. Every item takes the one validation
 * path (cache, coalescing, the per-country limiter and breaker), so a batch never trips a registry's
 * limit.
 */
export function createBatchService(deps: BatchServiceDeps) {
  const { repository, validation, clock, workerId } = deps;
  const sync = createSyncBatch({ validation, peppol: deps.peppol });
  const jobs = createJobStore({
    db: deps.db,
    repository,
    validation,
    outbox: deps.outbox,
    clock,
    ids: deps.ids,
    onQueued: () => {
      scheduler.wake();
      deps.onQueued?.();
    },
    onFinished: (jobId) => scheduler.forget(jobId),
    keyState: deps.keyState,
    retentionDays: deps.jobRetentionDays,
  });
  const scheduler = createItemScheduler({
    repository,
    clock,
    workerId,
    leaseMs: deps.leaseMs,
    perCountryInFlight: deps.perCountryInFlight,
    ...(deps.minClaim !== undefined ? { minClaim: deps.minClaim } : {}),
    finishJob: (jobId) => jobs.finishJob(jobId),
  });
  const processor = createItemProcessor({
    repository,
    validation,
    peppol: deps.peppol,
    outbox: deps.outbox,
    jobs,
    keyState: deps.keyState,
    scheduler,
    clock,
    workerId,
    retryDeadlineMs: deps.retryDeadlineMs,
    retryBackoffMs: deps.retryBackoffMs,
    ...(deps.onError ? { onError: deps.onError } : {}),
    ...(deps.random ? { random: deps.random } : {}),
  });

  return {
    limits: { sync: SYNC_BATCH_LIMIT, async: ASYNC_BATCH_LIMIT },
    /** Whether a request may be worked, or its refusal before any work: too many numbers, a malformed requester. */
    checkRequest: (input: Parameters<typeof checkBatchRequest>[1]) => checkBatchRequest(validation, input),
    validateMany: sync.validateMany,
    createJob: jobs.createJob,
    getJob: jobs.getJob,
    claimDue: scheduler.claimDue,
    processItem: processor.processItem,
    finishJob: jobs.finishJob,
    /** Deletes ended jobs past their retention with their items, in batches; returns how many jobs. */
    purgeExpired: jobs.purgeExpired,
  };
}

export type BatchService = ReturnType<typeof createBatchService>;
