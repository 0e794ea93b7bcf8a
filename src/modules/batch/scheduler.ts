import type { BatchItemsTable } from '../../db/schema.js';
import { boundedCache } from '../../lib/bounded-cache.js';
import type { Clock } from '../../lib/clock.js';
import type { BatchRepository } from './repository.js';

/** How long a claim that found only full countries is not repeated (unless work is queued). */
const BLOCKED_RECHECK_MS = 250;
/** Idle claims between two looks for jobs whose finishing step was interrupted. */
const SWEEP_EVERY_IDLE_CLAIMS = 20;

/** Adds `by` to the count of `key`; a count that reaches 0 is removed. */
function addTo(counts: Map<string, number>, key: string, by: number): void {
  const n = (counts.get(key) ?? 0) + by;
  if (n <= 0) counts.delete(key);
  else counts.set(key, n);
}

/**
 * Which batch items this worker takes next: flow control per country (every country's limiter stays
 * busy without one slow country filling every slot), the items this process holds, and the sweep
 * for jobs whose finishing step was interrupted.
 */
export function createItemScheduler(deps: {
  repository: BatchRepository;
  clock: Clock;
  /** Identifies this process's leases. */
  workerId: string;
  leaseMs: number;
  /** Items of one country a worker keeps in flight (enough to keep that country's limiter busy). */
  perCountryInFlight: number;
  /**
   * While items are in flight, a claim waits until this many slots are free, so a busy worker claims
   * in groups instead of once per finished item (default 1).
   */
  minClaim?: number;
  /** Completes a job whose items are all done (the sweep of interrupted ones). */
  finishJob: (jobId: string) => Promise<void>;
}) {
  const { repository, clock, workerId } = deps;
  /** Jobs this worker has marked running (marking again is harmless: it only moves `queued` jobs). */
  const started = boundedCache<string, true>(10_000);
  /** Items of each country this process holds. */
  const heldByCountry = new Map<string, number>();
  /** Items of each job this process holds: a job can only be finished by its last holder. */
  const heldByJob = new Map<string, number>();
  let idleClaims = 0;
  /** Countries seen in the last claim: bounds the next claim, so a one-country job is not over-claimed. */
  let lastCountries: number | null = null;
  /**
   * The countries skipped by the last claim that found nothing. While all of them are still full, a
   * new claim would scan the same rows for nothing, so it is skipped for a short while.
   */
  let blocked: { countries: string[]; at: number } | null = null;

  function countHeld(item: BatchItemsTable, by: number): void {
    addTo(heldByCountry, item.country, by);
    addTo(heldByJob, item.job_id, by);
  }

  /**
   * Claims due items for this worker, lowest rank first (every country's next items side by side),
   * keeping at most `perCountryInFlight` items of one country: the limiter of each country stays
   * busy without one slow country filling every slot.
   */
  async function claimDue(limit: number): Promise<BatchItemsTable[]> {
    const now = clock.now();
    if (limit < (deps.minClaim ?? 1) && heldByCountry.size > 0) return [];
    const skipCountries = [...heldByCountry].filter(([, n]) => n >= deps.perCountryInFlight).map(([c]) => c);
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
      limit: lastCountries === null ? limit : Math.min(limit, deps.perCountryInFlight * (lastCountries + 1)),
      skipCountries,
      capacity: (country) => deps.perCountryInFlight - (heldByCountry.get(country) ?? 0),
    });
    const kept: BatchItemsTable[] = [];
    const excess: string[] = [];
    for (const item of claimed) {
      if ((heldByCountry.get(item.country) ?? 0) >= deps.perCountryInFlight) excess.push(item.id);
      else {
        countHeld(item, 1);
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
      for (const jobId of await repository.stalledJobs(10)) await deps.finishJob(jobId);
    }
    return kept;
  }

  return {
    claimDue,
    /** The item is no longer held by this process (finished, retried later or given back). */
    release(item: BatchItemsTable): void {
      countHeld(item, -1);
    },
    /** Whether this process still holds items of the job. */
    holdsItemsOf(jobId: string): boolean {
      return heldByJob.has(jobId);
    },
    /** New work was queued: the next claim looks again at once. */
    wake(): void {
      blocked = null;
    },
    /** The job is completed: forget that this worker marked it running. */
    forget(jobId: string): void {
      started.delete(jobId);
    },
  };
}

export type ItemScheduler = ReturnType<typeof createItemScheduler>;
