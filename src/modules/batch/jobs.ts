import { LRUCache } from 'lru-cache';
import type { Db } from '../../db/database.js';
import { deleteInBatches } from '../../db/delete-in-batches.js';
import type { BatchItemsTable, BatchJobsTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import {
  type ApiKeyPrincipal,
  type KeyState,
  principalOfStoredWork,
  UNFINISHED_BATCH_JOBS,
} from '../keys/index.js';
import type { Outbox } from '../outbox/index.js';
import { PLAYGROUND_PRINCIPAL, PLAYGROUND_RETENTION_MS } from '../playground/index.js';
import type { ValidationService } from '../validation/index.js';
import { type BatchItemInput, itemRows } from './items.js';
import { tooManyJobs } from './limits.js';
import type { BatchJob, BatchRepository, JobExpiry } from './repository.js';
import {
  type BatchItemResult,
  type BatchSummary,
  countSource,
  rollup,
  type SourceCounts,
} from './results.js';

export type JobStatus = 'queued' | 'running' | 'completed' | 'cancelled';

/** Why a job was cancelled: the key that created it may no longer be used. */
export type CancelReason = 'key_revoked' | 'key_expired' | 'key_rolled' | 'account_disabled';

export const CANCEL_REASONS: readonly CancelReason[] = [
  'key_revoked',
  'key_expired',
  'key_rolled',
  'account_disabled',
];

const STOPPED = 'its remaining items were not validated, and no batch.completed event was sent.';
const CANCEL_MESSAGES: Record<CancelReason, string> = {
  key_revoked: `The API key that created this job was revoked: ${STOPPED}`,
  key_expired: `The API key that created this job expired: ${STOPPED}`,
  key_rolled: `The API key that created this job was rolled to a new key and its overlap ended: ${STOPPED}`,
  account_disabled: `The account of the API key that created this job was disabled: ${STOPPED}`,
};

/** Whether the jobs of a key in this state may go on (`ok`, an active key), or are cancelled and why. */
export function cancelReasonOf(
  state: KeyState,
): { kind: 'ok' } | { kind: 'cancelled'; reason: CancelReason } {
  switch (state) {
    case 'active':
      return { kind: 'ok' };
    case 'expired':
      return { kind: 'cancelled', reason: 'key_expired' };
    case 'rolled':
      return { kind: 'cancelled', reason: 'key_rolled' };
    case 'account_disabled':
      return { kind: 'cancelled', reason: 'account_disabled' };
    default:
      return { kind: 'cancelled', reason: 'key_revoked' };
  }
}

/**
 * `data` of a batch job response. `summary` and `results` once it is completed; `cancelled_at` and
 * `cancel_reason` once it is cancelled.
 */
export interface JobView {
  id: string;
  status: JobStatus;
  total: number;
  /** Items finished, successful or not. */
  done: number;
  /** Finished items with an error. */
  failed: number;
  created_at: string;
  completed_at?: string;
  cancelled_at?: string;
  cancel_reason?: { code: CancelReason; message: string };
  summary?: BatchSummary;
  results?: BatchItemResult[];
}

/**
 * A job as its key reads it: its progress, or once completed its `data` as JSON (see `getJob`);
 * refused (`not_found`) for a job of another key, past its retention, or an id that is no UUID.
 */
export type JobRead = { kind: 'progress'; view: JobView } | { kind: 'completed'; json: string } | Refusal;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The refusal of a job id this key has no job of. */
function jobNotFound(id: string): Refusal {
  return refusal('not_found', `No batch job ${id} for this API key.`);
}

const DAY_MS = 86_400_000;
/** Rows deleted per statement by the retention purge. */
const PURGE_BATCH = 1_000;

/**
 * Batch jobs as stored: creating one with its items, its progress and completed view, and its
 * completion (the audit record of the call that created it and its `batch.completed` event).
 */
export function createJobStore(deps: {
  db: Db;
  repository: BatchRepository;
  validation: Pick<ValidationService, 'parse'>;
  /** Records a completed job's audit record and event. */
  outbox: Pick<Outbox, 'record'>;
  clock: Clock;
  ids: IdGenerator;
  /** Called when new items were queued (wakes the worker). */
  onQueued?: () => void;
  /** Called once a job was completed or cancelled. */
  onFinished?: (jobId: string) => void;
  /** Whether the key that created a job may still be used (a job of a key that may not is cancelled). */
  keyState: (keyId: string) => Promise<KeyState>;
  /** Days an ended job is kept (served, then purged) after it ended. */
  retentionDays: number;
}) {
  const { db, repository, validation, clock, ids } = deps;
  /** Jobs read by the item processor, without their request body (which can be megabytes). */
  const cache = new LRUCache<string, BatchJob>({ max: 1_000 });
  /** Jobs this process has cancelled: their other claimed items need not cancel them again. */
  const cancelled = new LRUCache<string, true>({ max: 1_000 });

  /**
   * The retention as of now: ended jobs are kept `retentionDays` after they ended; every job of the
   * playground's demo key, which every visitor of /docs shares, `PLAYGROUND_RETENTION_MS` after it
   * was created.
   */
  function expiry(): JobExpiry {
    const now = clock.millis();
    return {
      endedBy: new Date(now - deps.retentionDays * DAY_MS).toISOString(),
      shortLived: {
        keyId: PLAYGROUND_PRINCIPAL.id,
        createdBy: new Date(now - PLAYGROUND_RETENTION_MS).toISOString(),
      },
    };
  }

  /** Whether a job is past its retention (it is then no longer served, even before it is purged). */
  function expired(row: BatchJob, at: JobExpiry): boolean {
    if (at.shortLived && row.key_id === at.shortLived.keyId && row.created_at <= at.shortLived.createdBy)
      return true;
    const ended = row.status !== 'queued' && row.status !== 'running';
    return ended && row.completed_at !== null && row.completed_at <= at.endedBy;
  }

  /** A job as the item processor needs it, read once and kept while its items are worked. */
  async function loadJob(id: string): Promise<BatchJob | undefined> {
    const cached = cache.get(id);
    if (cached) return cached;
    const row = await repository.findJob(id);
    if (row) cache.set(id, row);
    return row;
  }

  /** Summary and per-source counts of a finished job's items. */
  function tally(rows: Array<{ ok: number | null; source: string | null }>) {
    const sources: SourceCounts = {};
    let failed = 0;
    for (const row of rows) {
      if (row.ok !== 1) failed += 1;
      if (row.source) {
        const [source = '', status = ''] = row.source.split(':');
        countSource(sources, source, status);
      }
    }
    return { sources, summary: { total: rows.length, successful: rows.length - failed, failed } };
  }

  /**
   * The `data` of a completed job as JSON. The stored item results are already JSON: they are joined
   * as they are, not parsed and serialised again, which for 10,000 items would hold the event loop
   * for a quarter of a second.
   */
  function completedData(
    row: BatchJob,
    rows: Array<{ ok: number | null; result: string | null; source: string | null }>,
    completedAt: string | null,
  ) {
    const { sources, summary } = tally(rows);
    const head: Omit<JobView, 'results'> = {
      id: row.id,
      status: 'completed',
      total: row.total,
      done: summary.total,
      failed: summary.failed,
      created_at: row.created_at,
      ...(completedAt ? { completed_at: completedAt } : {}),
      summary,
    };
    const json = `${JSON.stringify(head).slice(0, -1)},"results":[${rows.map((item) => item.result ?? 'null').join(',')}]}`;
    return { json, sources };
  }

  /**
   * Completes a job whose items are all done: its audit record (the full result, under the request
   * that created the job) and, for live keys, its `batch.completed` event. Items that are done never
   * change, so the result is read before the transaction; completing the job row is the guard that
   * lets exactly one worker record it.
   */
  async function finishJob(jobId: string): Promise<void> {
    const row = await repository.findJob(jobId);
    if (!row || row.status === 'completed' || row.status === 'cancelled') return;
    // Items that were with a registry when the key stopped finish, but the job does not complete.
    const stopped = cancelReasonOf(await deps.keyState(row.key_id));
    if (stopped.kind === 'cancelled') return cancelJob(jobId, stopped.reason);
    const now = clock.now();
    const completedAt = now.toISOString();
    const { json: dataJson, sources } = completedData(row, await repository.results(jobId), completedAt);
    const latency = Math.max(0, now.getTime() - Date.parse(row.created_at));
    const meta = { request_id: row.request_id, latency_ms: latency, ...rollup(sources), sources };
    const body = `{"data":${dataJson},"meta":${JSON.stringify(meta)}}`;
    await deps.outbox.record({
      own: async (trx) => ((await repository.completeJob(jobId, completedAt, trx)) ? undefined : false),
      audit: {
        principal: principalOfStoredWork(row),
        requestId: row.request_id,
        endpoint: 'validate_batch',
        responseJson: body,
        requestBody: JSON.parse((await repository.requestBody(jobId)) ?? 'null') as unknown,
        latencyMs: latency,
        statusCode: 202,
        valid: null,
      },
      events:
        row.mode === 'live'
          ? [{ accountId: row.account_id, keyId: row.key_id, type: 'batch.completed', payload: body }]
          : [],
    });
    cache.delete(jobId);
    deps.onFinished?.(jobId);
  }

  async function finishIfDone(jobId: string): Promise<void> {
    if (!(await repository.hasPending(jobId))) await finishJob(jobId);
  }

  /**
   * Cancels an unfinished job: it and its pending items are marked `cancelled` in one transaction,
   * so no worker claims, validates or records another of its items, and it is never completed (no
   * audit record of the creating call, no `batch.completed` event).
   */
  async function cancelJob(jobId: string, reason: CancelReason): Promise<void> {
    if (cancelled.has(jobId)) return;
    const at = clock.now().toISOString();
    await db.kysely.transaction().execute((trx) => repository.cancelJob(jobId, reason, at, trx));
    cancelled.set(jobId, true);
    cache.delete(jobId);
    deps.onFinished?.(jobId);
  }

  /**
   * Deletes the ended jobs past their retention with their items, in batches, yielding to the event
   * loop between them; returns how many jobs. Queued and running jobs are never deleted.
   */
  async function purgeExpired(batchSize = PURGE_BATCH): Promise<number> {
    const at = expiry();
    await deleteInBatches(batchSize, () => repository.deleteExpiredItems(at, batchSize));
    return deleteInBatches(batchSize, () => repository.deleteExpiredJobs(at, batchSize));
  }

  /**
   * Stores a batch job with one item per number; malformed numbers are answered at once. Refused
   * (`rate_limited`) when the key already has its plan's number of unfinished jobs: counted and
   * inserted in one transaction, serialised per key.
   */
  async function createJob(input: {
    principal: ApiKeyPrincipal;
    requestId: string;
    requestBody: unknown;
    items: readonly BatchItemInput[];
    requester: string | null;
    /** Whether each item adds its Peppol part. */
    includePeppol?: boolean;
  }): Promise<{ kind: 'ok'; job: JobView } | Refusal> {
    const now = clock.now().toISOString();
    const id = ids.uuid();
    const { items, failed } = itemRows(validation, id, input.items, now);
    const row = jobRow(input, id, items.length, now);
    const stored = await insertUnderLimit(row, items, UNFINISHED_BATCH_JOBS[input.principal.plan] ?? 0);
    if (stored.kind === 'refused') return stored;
    if (failed === items.length) return { kind: 'ok', job: await completeAtOnce(input.principal, id) };
    deps.onQueued?.();
    return {
      kind: 'ok',
      job: { id, status: 'queued', total: items.length, done: failed, failed, created_at: now },
    };
  }

  /** The row of a new job, queued. */
  function jobRow(
    input: Parameters<typeof createJob>[0],
    id: string,
    total: number,
    now: string,
  ): BatchJobsTable {
    return {
      id,
      key_id: input.principal.id,
      account_id: input.principal.accountId,
      plan: input.principal.plan,
      mode: input.principal.mode,
      request_id: input.requestId,
      request_body: JSON.stringify(input.requestBody),
      requester_vat_number: input.requester,
      status: 'queued',
      total,
      created_at: now,
      started_at: null,
      completed_at: null,
      cancel_reason: null,
      include: input.includePeppol ? 'peppol' : null,
    };
  }

  /**
   * Inserts a job with its items unless its key already has `limit` unfinished jobs:
   * counted and inserted in one transaction, serialised per key.
   */
  async function insertUnderLimit(
    row: BatchJobsTable,
    items: BatchItemsTable[],
    limit: number,
  ): Promise<{ kind: 'ok' } | Refusal> {
    return db.kysely.transaction().execute(async (trx) => {
      await repository.lockKeyJobs(row.key_id, trx);
      const unfinished = await repository.countUnfinished(row.key_id, trx);
      if (unfinished >= limit) return tooManyJobs(limit, unfinished);
      await repository.insertJob(row, items, trx);
      return { kind: 'ok' } as const;
    });
  }

  /** Completes a job whose items were all answered when it was created, and reads it as its key would. */
  async function completeAtOnce(principal: ApiKeyPrincipal, id: string): Promise<JobView> {
    await finishJob(id);
    const read = await getJob(principal, id);
    if (read.kind === 'refused') throw new Error('created job not found');
    return read.kind === 'completed' ? (JSON.parse(read.json) as JobView) : read.view;
  }

  /**
   * A job of this key (refused as not found for others, as is a job past its retention): its
   * progress, or once completed its `data` as JSON, with the results in input order, as its audit
   * record and `batch.completed` event hold them.
   */
  async function getJob(principal: ApiKeyPrincipal, id: string): Promise<JobRead> {
    if (!UUID_RE.test(id)) return jobNotFound(id);
    const row = await repository.findJobOfKey(principal.id, id);
    if (!row || expired(row, expiry())) return jobNotFound(id);
    if (row.status === 'completed') {
      return {
        kind: 'completed',
        json: completedData(row, await repository.results(id), row.completed_at).json,
      };
    }
    const counts = await repository.counts(id);
    const reason = row.cancel_reason as CancelReason | null;
    return {
      kind: 'progress',
      view: {
        id: row.id,
        status: row.status as JobStatus,
        total: row.total,
        done: counts.done,
        failed: counts.failed,
        created_at: row.created_at,
        ...(row.status === 'cancelled' && row.completed_at ? { cancelled_at: row.completed_at } : {}),
        ...(row.status === 'cancelled' && reason
          ? { cancel_reason: { code: reason, message: CANCEL_MESSAGES[reason] } }
          : {}),
      },
    };
  }

  return { loadJob, createJob, getJob, finishJob, finishIfDone, cancelJob, purgeExpired };
}

export type JobStore = ReturnType<typeof createJobStore>;
