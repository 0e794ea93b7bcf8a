import { LRUCache } from 'lru-cache';
import type { Db } from '../../db/database.js';
import type { BatchItemsTable, BatchJobsTable, RegistryAnswersTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import { backoffDelay } from '../../registries/resilience.js';
import { type ApiKeyPrincipal, principalOfStoredWork } from '../keys/service.js';
import type { Outbox } from '../outbox/service.js';
import { PLAYGROUND_JOB_LIMIT } from '../playground/playground.js';
import { validationRefusal } from '../validation/refusals.js';
import type { ValidationService } from '../validation/service.js';
import type {
  SourceStatus,
  ValidationData,
  ValidationOutcome,
  ValidationSource,
} from '../validation/types.js';
import { parseVatNumber } from '../vat-numbers/index.js';
import type { BatchJob, BatchRepository, ItemFinish } from './repository.js';

/** Most numbers in one synchronous batch, and in one batch job. */
export const SYNC_BATCH_LIMIT = 100;
export const ASYNC_BATCH_LIMIT = 10_000;

/** The hosted contract's closed list of per-item codes: a batch item fails with one of these three. */
export type BatchItemErrorCode = 'invalid_format' | 'country_unsupported' | 'registry_unavailable';

export type BatchItemResult =
  | { ok: true; data: ValidationData }
  | { ok: false; error: { code: BatchItemErrorCode; message: string } };

export interface BatchSummary {
  total: number;
  successful: number;
  failed: number;
}

/** Answers per registry and `source_status`, e.g. `{vies: {live: 3, cached: 1, degraded: 0}}`. */
export type SourceCounts = Record<string, { live: number; cached: number; degraded: number }>;

export interface ValidatedBatch {
  summary: BatchSummary;
  results: BatchItemResult[];
  sources: SourceCounts;
  /** Fresh registry answers, recorded with the response. */
  answers: RegistryAnswersTable[];
}

export type JobStatus = 'queued' | 'running' | 'completed';

/** `data` of a batch job response. `summary` and `results` once it is completed. */
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
  summary?: BatchSummary;
  results?: BatchItemResult[];
}

export interface BatchServiceDeps {
  db: Db;
  repository: BatchRepository;
  validation: Pick<ValidationService, 'validate' | 'parse'>;
  /** Records finished items (in groups) and a completed job's audit record and event. */
  outbox: Pick<Outbox, 'record' | 'lane'>;
  clock: Clock;
  ids: IdGenerator;
  /** Identifies this process's leases. */
  workerId: string;
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

const RETRY_CAP_MS = 5 * 60_000;
/**
 * Finished items are written in groups of up to 200 per transaction, and an item waits 10 ms for
 * others before its group is written: items finish one by one as their registry answers arrive, and
 * without the wait nearly every group would hold one item and cost a commit of its own.
 */
const ITEM_GROUPS = { maxUnits: 200, delayMs: 10 };
/** How long a claim that found only full countries is not repeated (unless work is queued). */
const BLOCKED_RECHECK_MS = 250;

/** Idle claims between two looks for jobs whose finishing step was interrupted. */
const SWEEP_EVERY_IDLE_CLAIMS = 20;

function itemResult(outcome: Exclude<ValidationOutcome, { kind: 'ok' }>): BatchItemResult;
function itemResult(outcome: ValidationOutcome): BatchItemResult;
function itemResult(outcome: ValidationOutcome): BatchItemResult {
  switch (outcome.kind) {
    case 'ok':
      return { ok: true, data: outcome.data };
    case 'invalid_format':
    case 'country_unsupported':
      return { ok: false, error: { code: outcome.kind, message: outcome.message } };
    case 'requester_rejected':
      return { ok: false, error: { code: 'invalid_format', message: outcome.message } };
    case 'unavailable':
    // The number could not be checked now (the test-mode throttled number): retry later, as for an
    // unavailable registry. A caller's own limit fails the whole batch before any item is looked up.
    case 'rate_limited':
      return { ok: false, error: { code: 'registry_unavailable', message: outcome.message } };
  }
}

function count(sources: SourceCounts, source: string, status: string): void {
  const entry = sources[source] ?? { live: 0, cached: 0, degraded: 0 };
  sources[source] = entry;
  if (status === 'live' || status === 'cached' || status === 'degraded') entry[status] += 1;
}

/** The hosted contract's batch `meta` fields, rolled up from the per-registry counts. */
export interface BatchMetaRollup {
  /** True when every answer was a stored one (none live). */
  cached: boolean;
  /** The registry that gave the most answers (`vies` when none answered). */
  source: ValidationSource;
  /** The worst status among the answers: `degraded` over `cached` over `live`. */
  source_status: SourceStatus;
}

export function rollup(sources: SourceCounts): BatchMetaRollup {
  let source: ValidationSource = 'vies';
  let most = 0;
  const totals = { live: 0, cached: 0, degraded: 0 };
  for (const [name, counts] of Object.entries(sources)) {
    const answers = counts.live + counts.cached + counts.degraded;
    if (answers > most) {
      most = answers;
      source = name as ValidationSource;
    }
    totals.live += counts.live;
    totals.cached += counts.cached;
    totals.degraded += counts.degraded;
  }
  return {
    cached: most > 0 && totals.live === 0,
    source,
    source_status: totals.degraded > 0 ? 'degraded' : totals.cached > 0 ? 'cached' : 'live',
  };
}

function tooLarge(limit: number, got: number, asynchronous: boolean, playground: boolean): Refusal {
  const message = !asynchronous
    ? `A synchronous batch takes at most ${limit} VAT numbers (got ${got.toLocaleString('en')}); send up to ${ASYNC_BATCH_LIMIT.toLocaleString('en')} with "async": true and poll GET /v1/validate/batch/{id}.`
    : playground
      ? `A batch job of the playground's demo key takes at most ${limit} VAT numbers (got ${got.toLocaleString('en')}); a key of your own takes ${ASYNC_BATCH_LIMIT.toLocaleString('en')}.`
      : `A batch job takes at most ${limit.toLocaleString('en')} VAT numbers (got ${got.toLocaleString('en')}); split the list into several jobs.`;
  return refusal('batch_too_large', message, { max: limit, got });
}

/**
 * Batch validation: a synchronous batch of up to 100 numbers, and durable batch jobs of up to 10,000
 * worked by leased items. Every item takes the one validation path (cache, coalescing, the
 * per-country limiter and breaker), so a batch never trips a registry's limit.
 */
export function createBatchService(deps: BatchServiceDeps) {
  const { db, repository, validation, clock, workerId } = deps;
  const random = deps.random ?? Math.random;
  const jobs = new LRUCache<string, BatchJob>({ max: 1_000 });
  /** Jobs this worker has marked running (marking again is harmless: it only moves `queued` jobs). */
  const started = new LRUCache<string, true>({ max: 10_000 });
  /** Items of each country this process holds. */
  const inFlight = new Map<string, number>();
  /** Items of each job this process holds: a job can only be finished by its last holder. */
  const jobInFlight = new Map<string, number>();
  let idleClaims = 0;
  /** Countries seen in the last claim: bounds the next claim, so a one-country job is not over-claimed. */
  let lastCountries: number | null = null;
  /**
   * The countries skipped by the last claim that found nothing. While all of them are still full, a
   * new claim would scan the same rows for nothing, so it is skipped for a short while.
   */
  let blocked: { countries: string[]; at: number } | null = null;

  /** A malformed requester fails the whole call, as it would fail every item. */
  function checkRequester(requester: string | null): Refusal | null {
    if (!requester) return null;
    const parsed = validation.parse(requester, 'requester_vat_number');
    return 'ok' in parsed ? null : validationRefusal(parsed);
  }

  async function job(id: string): Promise<BatchJob | undefined> {
    const cached = jobs.get(id);
    if (cached) return cached;
    const row = await repository.findJob(id);
    if (row) jobs.set(id, row);
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
        count(sources, source, status);
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
    if (!row || row.status === 'completed') return;
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
    jobs.delete(jobId);
    started.delete(jobId);
  }

  async function finishIfDone(jobId: string): Promise<void> {
    if (!(await repository.hasPending(jobId))) await finishJob(jobId);
  }

  const items = deps.outbox.lane(ITEM_GROUPS);

  function bump(map: Map<string, number>, key: string, by: number): void {
    const n = (map.get(key) ?? 0) + by;
    if (n <= 0) map.delete(key);
    else map.set(key, n);
  }

  function held(item: BatchItemsTable, by: number): void {
    bump(inFlight, item.country, by);
    bump(jobInFlight, item.job_id, by);
  }

  /** Works one claimed item; true when its result was recorded. */
  async function processClaimed(item: BatchItemsTable, signal?: AbortSignal): Promise<boolean> {
    const row = await job(item.job_id);
    if (!row) return false;
    let outcome: ValidationOutcome;
    try {
      outcome = await validation.validate(
        { vatNumber: item.vat_number, requesterVatNumber: row.requester_vat_number },
        principalOfStoredWork(row),
        signal,
      );
    } catch (error) {
      if (signal?.aborted) {
        await repository.release([item.id], workerId);
        return false;
      }
      deps.onError?.(error);
      outcome = {
        kind: 'unavailable',
        source: 'vies',
        message: 'The item could not be validated because of an internal error.',
        retryAfterSeconds: 60,
      };
    }
    if (outcome.kind === 'unavailable' && signal?.aborted) {
      await repository.release([item.id], workerId);
      return false;
    }
    if (outcome.kind === 'unavailable' && row.mode === 'live') {
      const now = clock.now();
      const until = item.retry_until ?? new Date(now.getTime() + deps.retryDeadlineMs).toISOString();
      if (now.toISOString() < until) {
        const delay = Math.max(1, backoffDelay(item.attempts, deps.retryBackoffMs, RETRY_CAP_MS, random));
        const next = new Date(Math.min(now.getTime() + delay, Date.parse(until))).toISOString();
        await repository.retryItem(item.id, workerId, {
          attempts: item.attempts + 1,
          nextAttemptAt: next,
          retryUntil: until,
          lastError: outcome.message,
        });
        return false;
      }
    }
    const result = itemResult(outcome);
    const finish: ItemFinish = {
      ok: result.ok,
      result: JSON.stringify(result),
      source: outcome.kind === 'ok' ? `${outcome.meta.source}:${outcome.meta.source_status}` : null,
      finishedAt: clock.now().toISOString(),
    };
    // An item whose lease another worker took over is not recorded (nor its answer).
    return items.record({
      own: async (trx) => ((await repository.finishItem(item.id, workerId, finish, trx)) ? undefined : false),
      ...(outcome.kind === 'ok' && outcome.fresh ? { answers: [outcome.fresh] } : {}),
    });
  }

  return {
    limits: { sync: SYNC_BATCH_LIMIT, async: ASYNC_BATCH_LIMIT },

    /** The refusal of a request before any work, if any: too many numbers, or a malformed requester. */
    checkRequest(input: {
      principal: ApiKeyPrincipal;
      count: number;
      asynchronous: boolean;
      requester: string | null;
    }): Refusal | null {
      // The playground's public demo key may try jobs, but not store 10,000 items at a time.
      const playground = input.principal.playground === true;
      const limit = !input.asynchronous
        ? SYNC_BATCH_LIMIT
        : playground
          ? PLAYGROUND_JOB_LIMIT
          : ASYNC_BATCH_LIMIT;
      if (input.count > limit) return tooLarge(limit, input.count, input.asynchronous, playground);
      return checkRequester(input.requester);
    },

    /**
     * Validates up to 100 numbers at once: each distinct number (after normalisation) is validated
     * once, all of them concurrently; results come back in input order.
     */
    async validateMany(
      vatNumbers: readonly string[],
      requester: string | null,
      principal: ApiKeyPrincipal,
    ): Promise<ValidatedBatch> {
      const groups = new Map<string, { input: string; positions: number[] }>();
      vatNumbers.forEach((input, position) => {
        const parsed = parseVatNumber(input);
        const key = parsed.ok ? parsed.normalised : `\u0000${input}`;
        const group = groups.get(key);
        if (group) group.positions.push(position);
        else groups.set(key, { input, positions: [position] });
      });
      const distinct = [...groups.values()];
      const outcomes = await Promise.all(
        distinct.map((g) =>
          validation.validate({ vatNumber: g.input, requesterVatNumber: requester }, principal),
        ),
      );
      const results: BatchItemResult[] = new Array(vatNumbers.length);
      const answers: RegistryAnswersTable[] = [];
      const sources: SourceCounts = {};
      let failed = 0;
      distinct.forEach((group, i) => {
        const outcome = outcomes[i] as ValidationOutcome;
        const result = itemResult(outcome);
        if (outcome.kind === 'ok' && outcome.fresh) answers.push(outcome.fresh);
        for (const position of group.positions) {
          results[position] = result;
          if (!result.ok) failed += 1;
          if (outcome.kind === 'ok') count(sources, outcome.meta.source, outcome.meta.source_status);
        }
      });
      return {
        summary: { total: vatNumbers.length, successful: vatNumbers.length - failed, failed },
        results,
        sources,
        answers,
      };
    },

    /** Stores a batch job with one item per number; malformed numbers are answered at once. */
    async createJob(input: {
      principal: ApiKeyPrincipal;
      requestId: string;
      requestBody: unknown;
      vatNumbers: readonly string[];
      requester: string | null;
    }): Promise<JobView> {
      const now = clock.now().toISOString();
      const id = deps.ids.uuid();
      const ranks = new Map<string, number>();
      let failed = 0;
      const items: BatchItemsTable[] = input.vatNumbers.map((vatNumber, position) => {
        const parsed = parseVatNumber(vatNumber);
        const country = parsed.ok ? parsed.country : 'XX';
        const rank = ranks.get(country) ?? 0;
        ranks.set(country, rank + 1);
        const base: BatchItemsTable = {
          id: `${id}:${position}`,
          job_id: id,
          position,
          vat_number: vatNumber,
          country,
          rank,
          status: 'pending',
          ok: null,
          result: null,
          source: null,
          attempts: 0,
          next_attempt_at: now,
          retry_until: null,
          last_error: null,
          locked_until: null,
          claimed_by: null,
          finished_at: null,
        };
        if (parsed.ok) return base;
        // No registry is asked for a number that cannot be one: its answer is known now.
        failed += 1;
        const outcome = validation.parse(vatNumber, 'vat_number');
        const result = 'ok' in outcome ? null : itemResult(outcome);
        return { ...base, status: 'done', ok: 0, result: JSON.stringify(result), finished_at: now };
      });
      const row: BatchJobsTable = {
        id,
        key_id: input.principal.id,
        account_id: input.principal.accountId,
        plan: input.principal.plan,
        mode: input.principal.mode,
        request_id: input.requestId,
        request_body: JSON.stringify(input.requestBody),
        requester_vat_number: input.requester,
        status: 'queued',
        total: items.length,
        created_at: now,
        started_at: null,
        completed_at: null,
      };
      await db.kysely.transaction().execute((trx) => repository.insertJob(row, items, trx));
      if (failed === items.length) {
        await finishJob(id);
        const answer = await this.getJob(input.principal, id);
        return answer && 'json' in answer ? (JSON.parse(answer.json) as JobView) : (answer?.view as JobView);
      }
      blocked = null;
      deps.onQueued?.();
      return { id, status: 'queued', total: items.length, done: failed, failed, created_at: now };
    },

    /**
     * A job of this key (others get null): its progress, or once completed its `data` as JSON, with
     * the results in input order, as its audit record and `batch.completed` event hold them.
     */
    async getJob(
      principal: ApiKeyPrincipal,
      id: string,
    ): Promise<{ view: JobView } | { json: string } | null> {
      const row = await repository.findJob(id);
      if (!row || row.key_id !== principal.id) return null;
      if (row.status === 'completed') {
        return { json: completedData(row, await repository.results(id), row.completed_at).json };
      }
      const counts = await repository.counts(id);
      return {
        view: {
          id: row.id,
          status: row.status as JobStatus,
          total: row.total,
          done: counts.done,
          failed: counts.failed,
          created_at: row.created_at,
        },
      };
    },

    /**
     * Claims due items for this worker, lowest rank first (every country's next items side by side),
     * keeping at most `perCountryInFlight` items of one country: the limiter of each country stays
     * busy without one slow country filling every slot.
     */
    async claimDue(limit: number): Promise<BatchItemsTable[]> {
      const now = clock.now();
      if (limit < (deps.minClaim ?? 1) && inFlight.size > 0) return [];
      const skipCountries = [...inFlight].filter(([, n]) => n >= deps.perCountryInFlight).map(([c]) => c);
      if (
        blocked &&
        now.getTime() - blocked.at < BLOCKED_RECHECK_MS &&
        blocked.countries.every((c) => skipCountries.includes(c))
      ) {
        return [];
      }
      const claimed = await repository.claimDue({
        now: now.toISOString(),
        leaseUntil: new Date(now.getTime() + deps.leaseMs).toISOString(),
        workerId,
        limit:
          lastCountries === null ? limit : Math.min(limit, deps.perCountryInFlight * (lastCountries + 1)),
        skipCountries,
        capacity: (country) => deps.perCountryInFlight - (inFlight.get(country) ?? 0),
      });
      const kept: BatchItemsTable[] = [];
      const excess: string[] = [];
      for (const item of claimed) {
        if ((inFlight.get(item.country) ?? 0) >= deps.perCountryInFlight) excess.push(item.id);
        else {
          held(item, 1);
          kept.push(item);
        }
      }
      await repository.release(excess, workerId);
      if (claimed.length > 0) lastCountries = new Set(claimed.map((i) => i.country)).size;
      blocked =
        claimed.length === 0 && skipCountries.length > 0
          ? { countries: skipCountries, at: now.getTime() }
          : null;
      if (kept.length > 0) {
        idleClaims = 0;
        // A job is marked running once by this worker, not on every claim of its items.
        const starting = [...new Set(kept.map((i) => i.job_id))].filter((id) => !started.has(id));
        await repository.markRunning(starting, now.toISOString());
        for (const id of starting) started.set(id, true);
      } else if (idleClaims++ % SWEEP_EVERY_IDLE_CLAIMS === 0) {
        for (const jobId of await repository.stalledJobs(10)) await finishJob(jobId);
      }
      return kept;
    },

    /**
     * Validates one claimed item and records its result with the registry answer (grouped with other
     * items' results). An unavailable registry is retried with backoff until the retry deadline (test
     * keys answer from a fixed table, so they are not retried). The last item this worker holds of a
     * job finishes the job when nothing of it is pending.
     */
    async processItem(item: BatchItemsTable, signal?: AbortSignal): Promise<void> {
      let finished = false;
      try {
        finished = await processClaimed(item, signal);
      } finally {
        held(item, -1);
      }
      if (finished && !jobInFlight.has(item.job_id)) await finishIfDone(item.job_id);
    },

    finishJob,
  };
}

export type BatchService = ReturnType<typeof createBatchService>;
