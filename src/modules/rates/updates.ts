/**
 * Rates that stay current: the scheduled sync (one instance at a time, under the database lease the
 * workers use), the reload that makes every instance serve what was learnt or decided, and an
 * operator's decisions on held changes.
 */
import type { Clock } from '../../lib/clock.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import type { RecordWrite } from '../keys/index.js';
import type { RatesDataset } from './dataset.js';
import { type AppliedChange, changesOfRows, layerChanges, type PeriodRates } from './layers.js';
import type { RatesChangedPublisher } from './publish.js';
import type { RateChangeRow, RatesRepository } from './repository.js';
import type { RatesService } from './service.js';
import type { RatesSync, SyncOutcome } from './sync.js';

const SYNC_ID = 'tedb';
const DAY_MS = 86_400_000;
const STATUS_CACHE_MS = 2_000;

/** A learnt change as the CLI, the admin API and `GET /v1/status` show it. */
export interface RateChangeView {
  id: string;
  country_code: string;
  valid_from: string;
  rates: PeriodRates | null;
  source: string;
  learnt_at: string;
  status: string;
  reason: string | null;
  decided_at: string | null;
  decided_by: string | null;
}

export function viewOf(row: RateChangeRow): RateChangeView {
  return { ...row, rates: JSON.parse(row.rates) as PeriodRates | null };
}

export interface RatesSyncStatus {
  /** `off` when no TEDB address is configured. */
  enabled: boolean;
  last_run_at: string | null;
  last_success_at: string | null;
  /** Why the last run changed nothing, or null when it succeeded. */
  last_error: string | null;
  next_run_at: string | null;
  /** Changes waiting for an operator. */
  held: number;
}

/** An operator's decision on a held change: the change as decided, or `not_found`, `rate_change_not_held`. */
export type DecideOutcome = { kind: 'ok'; change: RateChangeView } | Refusal;

export function createRatesUpdates(deps: {
  curated: RatesDataset;
  /** An operator's overrides (`OPENVAT_RATES_OVERRIDES`), layered over curated and learnt. */
  overrides?: readonly AppliedChange[];
  rates: RatesService;
  repository: RatesRepository;
  /** Null when the sync is off (`OPENVAT_TEDB_URL=off`). */
  sync: RatesSync | null;
  clock: Clock;
  workerId: string;
  /** A sync that failed is tried again after this long. */
  retryMs?: number;
  /** Told each run's outcome and when the next run is due (ISO 8601). */
  onSynced?: (outcome: SyncOutcome, nextRunAt: string) => void;
  /** Publishes `rates.changed` after each reload; none when absent. */
  publisher?: RatesChangedPublisher;
  /** Told when publishing `rates.changed` failed (it is tried again at the next reload). */
  onPublishError?: (error: unknown) => void;
}) {
  const { curated, rates, repository, sync, clock, workerId } = deps;
  const retryMs = deps.retryMs ?? 3_600_000;
  const overrides = deps.overrides ?? [];
  /** The applied changes last served; null before the first reload, which always serves. */
  let fingerprint: string | null = null;
  let heldCount = 0;
  let statusCache: { status: RatesSyncStatus; until: number } | null = null;

  /**
   * Serves what is applied in the database now (cheap when nothing changed), then publishes what
   * changed in the rates in force: what was just learnt or accepted, and periods that started.
   */
  async function reload(): Promise<boolean> {
    const rows = await repository.changes(['applied', 'held']);
    heldCount = rows.filter((r) => r.status === 'held').length;
    const applied = rows.filter((r) => r.status === 'applied');
    const next = applied.map((r) => `${r.id}`).join(',');
    const changed = next !== fingerprint;
    const changes = changesOfRows(applied);
    if (changed) {
      fingerprint = next;
      rates.replace(layerChanges(curated, changes, overrides));
    }
    if (deps.publisher) {
      try {
        await deps.publisher.check({
          layered: rates.layered(),
          applied: changed ? applied : null,
          without: (id) =>
            layerChanges(
              curated,
              changes.filter((c) => c.id !== id),
              overrides,
            ),
        });
      } catch (error) {
        deps.onPublishError?.(error);
      }
    }
    return changed;
  }

  /** Runs the sync now, whatever its schedule (the CLI), and serves the result. */
  async function syncNow(): Promise<SyncOutcome> {
    if (!sync) return { kind: 'failed', message: 'the rates sync is off (OPENVAT_TEDB_URL=off)' };
    await reload();
    const now = clock.now();
    const leaseUntil = new Date(now.getTime() + 10 * 60_000).toISOString();
    // Taken like a scheduled run, so a running service's sync and this one never overlap.
    const claimed = await repository.claimSync(SYNC_ID, workerId, now.toISOString(), leaseUntil, {
      evenIfNotDue: true,
    });
    if (!claimed)
      return { kind: 'failed', message: 'another instance is syncing the rates now; try again in a minute' };
    return finish(now);
  }

  async function finish(started: Date): Promise<SyncOutcome> {
    let outcome: SyncOutcome;
    try {
      outcome = await (sync as RatesSync).run();
    } catch (error) {
      outcome = { kind: 'failed', message: `the rates sync failed: ${(error as Error).message}` };
    }
    const at = clock.now();
    const nextRunAt = new Date(
      started.getTime() + (outcome.kind === 'synced' ? DAY_MS : retryMs),
    ).toISOString();
    await repository.finishSync(SYNC_ID, workerId, {
      at: at.toISOString(),
      nextRunAt,
      error: outcome.kind === 'failed' ? outcome.message : null,
    });
    statusCache = null;
    await reload();
    deps.onSynced?.(outcome, nextRunAt);
    return outcome;
  }

  return {
    reload,
    syncNow,

    /** The scheduled run: syncs when due and not held by another instance; null when it did not run. */
    async runIfDue(): Promise<SyncOutcome | null> {
      if (!sync) return null;
      const now = clock.now();
      const leaseUntil = new Date(now.getTime() + 10 * 60_000).toISOString();
      const claimed = await repository.claimSync(SYNC_ID, workerId, now.toISOString(), leaseUntil);
      if (!claimed) return null;
      return finish(now);
    },

    async changes(statuses: readonly string[]): Promise<RateChangeView[]> {
      return (await repository.changes(statuses)).map(viewOf);
    },

    /**
     * Accepts (releases) or rejects a held change, on behalf of `operator`: `by` names them in the
     * change's `decided_by`, `record` writes the admin audit log's entry in the same transaction.
     */
    async decide(
      id: string,
      decision: 'accept' | 'reject',
      operator: { by: string; record: RecordWrite },
    ): Promise<DecideOutcome> {
      const status = decision === 'accept' ? 'applied' : 'rejected';
      const done = await repository.decide(
        id,
        { status, at: clock.now().toISOString(), by: operator.by },
        (trx, row) =>
          operator.record(trx, {
            action: `rate_change.${decision}`,
            target_type: 'rate_change',
            target_id: id,
            changes: {
              status: { from: 'held', to: status },
              country_code: row.country_code,
              valid_from: row.valid_from,
              rates: JSON.parse(row.rates) as PeriodRates | null,
              reason: row.reason,
            },
          }),
      );
      const row = await repository.change(id);
      if (!row) return refusal('not_found', `No rate change has the id ${id}.`);
      if (!done)
        return refusal(
          'rate_change_not_held',
          `Rate change ${id} is not held (any more): only a held change can be accepted or rejected.`,
        );
      statusCache = null;
      await reload();
      return { kind: 'ok', change: viewOf(row) };
    },

    /** The sync's state, read from the database at most every two seconds (the route is public). */
    async status(): Promise<RatesSyncStatus> {
      const now = clock.millis();
      if (statusCache && now < statusCache.until && now >= statusCache.until - STATUS_CACHE_MS)
        return statusCache.status;
      const status = await readStatus();
      statusCache = { status, until: now + STATUS_CACHE_MS };
      return status;
    },

    /** Changes waiting for an operator, as last read (for the metric). */
    heldCount: () => heldCount,
  };

  async function readStatus(): Promise<RatesSyncStatus> {
    const row = await repository.sync(SYNC_ID);
    // Counted in the database, not as last reloaded: a decision taken elsewhere (the CLI) shows too.
    heldCount = (await repository.changes(['held'])).length;
    return {
      enabled: sync !== null,
      last_run_at: row?.last_run_at ?? null,
      last_success_at: row?.last_success_at ?? null,
      last_error: row?.last_error ?? null,
      next_run_at: sync ? (row?.next_run_at ?? null) : null,
      held: heldCount,
    };
  }
}

export type RatesUpdates = ReturnType<typeof createRatesUpdates>;
