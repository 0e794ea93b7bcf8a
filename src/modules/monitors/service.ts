import { deleteInBatches } from '../../db/delete-in-batches.js';
import type { MonitorsTable } from '../../db/schema.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import { PLAYGROUND_PRINCIPAL, PLAYGROUND_RETENTION_MS } from '../playground/index.js';
import type { ValidationOutcome } from '../validation/index.js';
import { createMonitorChecks } from './checks.js';
import { capOf, createMonitorCreation } from './create.js';
import type { MonitorsDeps } from './deps.js';
import type { MonitorUpdate, Owner } from './repository.js';
import { type Interval, nextCheckAt } from './schedule.js';
import {
  type ChangeView,
  type CheckResult,
  type CheckView,
  changeView,
  checkView,
  type MonitorStatus,
  type MonitorView,
  monitorView,
} from './views.js';

export { detectChanges } from './changes.js';
export {
  BULK_LIMIT,
  type BulkResult,
  type BulkRow,
  type CreateOutcome,
  type MonitorInput,
} from './create.js';
export type { MonitorsDeps } from './deps.js';
export * from './views.js';

/** What a patch of a monitor may change (`null` clears the reference or metadata). */
export interface MonitorPatch {
  interval?: Interval;
  reference?: string | null;
  metadata?: Record<string, unknown> | null;
  peppol?: boolean;
}

/** A monitor as `GET /v1/monitors/{id}` shows it: with its latest checks and changes, newest first. */
export interface MonitorWithHistory {
  monitor: MonitorView;
  checks: CheckView[];
  changes: ChangeView[];
}

/** The refusal of a monitor id that the key has no monitor of. */
export function monitorNotFound(id: string): Refusal {
  return refusal('not_found', `No monitor ${id} for this API key.`);
}

/** Checks and changes shown with a monitor. */
const HISTORY_LIMIT = 50;
/** When the monitors of a revoked key are due: never (a key is not un-revoked). */
const NEVER = '9999-12-31T00:00:00.000Z';
/** When the monitors of an expired key or a disabled account are looked at again. */
const KEY_STOPPED_RETRY_MS = 3_600_000;
const DAY_MS = 86_400_000;

/**
 * Monitoring: VAT numbers of a key re-checked on a durable, spread schedule through the one
 * validation path (cache, coalescing, per-country limits and breakers), each check compared with
 * the last known state; changes and lasting failures are recorded and sent as webhook events.
 */
export function createMonitorsService(deps: MonitorsDeps) {
  const { db, repository, clock, workerId } = deps;

  /**
   * The monitors a principal sees: its key's, and for the playground's demo key, which every visitor
   * of /docs shares, only those created in the last `PLAYGROUND_RETENTION_MS` (older ones are purged).
   */
  function ownerOf(principal: ApiKeyPrincipal): Owner {
    return {
      keyId: principal.id,
      createdAfter: principal.playground ? playgroundCutoff() : null,
    };
  }

  /** Monitors of the demo key created at or before this are past their retention. */
  function playgroundCutoff(): string {
    return new Date(clock.millis() - PLAYGROUND_RETENTION_MS).toISOString();
  }

  const checks = createMonitorChecks(deps);
  const { ask, apply, bump, inFlight: running } = checks;

  const creation = createMonitorCreation(deps, checks, ownerOf);

  /** Unclaims a monitor and sets its next check. */
  async function pause(id: string, until: string): Promise<void> {
    await repository.update(id, { next_check_at: until, locked_until: null, claimed_by: null });
  }

  /**
   * Whether a monitor's key may no longer be used; its monitor is then paused: for good when the key
   * was revoked or rolled, for an hour when it expired or its account is disabled.
   */
  async function stopped(keyId: string, monitorId: string): Promise<boolean> {
    const state = await deps.keyState(keyId);
    if (state === 'active') return false;
    const temporary = state === 'expired' || state === 'account_disabled';
    await pause(monitorId, temporary ? new Date(clock.millis() + KEY_STOPPED_RETRY_MS).toISOString() : NEVER);
    return true;
  }

  /** The principal's monitor `id`; refused (`not_found`) when its key has no such monitor. */
  async function ownedRow(
    principal: ApiKeyPrincipal,
    id: string,
  ): Promise<{ kind: 'ok'; row: MonitorsTable } | Refusal> {
    const row = await repository.findOfKey(ownerOf(principal), id);
    return row ? { kind: 'ok', row } : monitorNotFound(id);
  }

  async function list(
    principal: ApiKeyPrincipal,
    filter: {
      status?: MonitorStatus;
      changedSince?: string;
      stale?: boolean;
      after?: string;
      limit: number;
    },
  ): Promise<{ monitors: MonitorView[]; next: string | null }> {
    const rows = await repository.list({ owner: ownerOf(principal), ...filter, limit: filter.limit + 1 });
    const page = rows.slice(0, filter.limit);
    return {
      monitors: page.map(monitorView),
      next: rows.length > filter.limit ? (page[page.length - 1]?.id ?? null) : null,
    };
  }

  /** A monitor with its latest checks and changes; refused (`not_found`) when not the key's. */
  async function get(
    principal: ApiKeyPrincipal,
    id: string,
  ): Promise<{ kind: 'ok'; view: MonitorWithHistory } | Refusal> {
    const owned = await ownedRow(principal, id);
    if (owned.kind === 'refused') return owned;
    const [checks, changes] = await Promise.all([
      repository.checks(id, HISTORY_LIMIT),
      repository.changes(id, HISTORY_LIMIT),
    ]);
    return {
      kind: 'ok',
      view: {
        monitor: monitorView(owned.row),
        checks: checks.map(checkView),
        changes: changes.map(changeView),
      },
    };
  }

  /** The columns a patch changes of a monitor as it is. */
  function updateOf(row: MonitorsTable, patch: MonitorPatch): MonitorUpdate {
    const update: MonitorUpdate = {};
    if (patch.reference !== undefined) update.reference = patch.reference;
    if (patch.peppol !== undefined && (patch.peppol ? 1 : 0) !== row.peppol) {
      update.peppol = patch.peppol ? 1 : 0;
      // A monitor that stops checking Peppol forgets what it knew (a later `true` starts afresh).
      if (!patch.peppol) Object.assign(update, { peppol_state: null, peppol_checked_at: null });
    }
    if (patch.metadata !== undefined)
      update.metadata = patch.metadata === null ? null : JSON.stringify(patch.metadata);
    if (patch.interval !== undefined && patch.interval !== row.interval) {
      update.interval = patch.interval;
      // A monitor waiting for a retry or its first check keeps that time.
      if (row.failures === 0 && row.checks > 0) {
        update.next_check_at = new Date(
          nextCheckAt({
            id: row.id,
            interval: patch.interval,
            country: row.country,
            checkedAtMs: Date.parse(row.last_attempt_at ?? row.created_at),
            windows: deps.quietWindows,
          }),
        ).toISOString();
      }
    }
    return update;
  }

  /**
   * Changes a monitor's interval, reference or metadata (`null` clears them). A new interval moves
   * the next check to the monitor's place in it, counted from the last check. Refused
   * (`not_found`) when the key has no such monitor.
   */
  async function update(
    principal: ApiKeyPrincipal,
    id: string,
    patch: MonitorPatch,
  ): Promise<{ kind: 'ok'; monitor: MonitorView } | Refusal> {
    return db.kysely.transaction().execute(async (trx) => {
      const row = await repository.findOfKeyForUpdate(ownerOf(principal), id, trx);
      if (!row) return monitorNotFound(id);
      const changed = updateOf(row, patch);
      if (Object.keys(changed).length > 0) await repository.update(row.id, changed, trx);
      return { kind: 'ok' as const, monitor: monitorView({ ...row, ...changed } as MonitorsTable) };
    });
  }

  /** Deletes a monitor with its checks and changes; refused (`not_found`) when not the key's. */
  async function remove(principal: ApiKeyPrincipal, id: string): Promise<{ kind: 'ok' } | Refusal> {
    const owner = ownerOf(principal);
    const removed = await db.kysely.transaction().execute((trx) => repository.remove(id, owner, trx));
    return removed ? { kind: 'ok' } : monitorNotFound(id);
  }

  /**
   * Checks a monitor now (a live registry call) and answers with the check and any change; refused
   * (`not_found`) when the key has no such monitor, or it was deleted while being checked.
   */
  async function checkNow(
    principal: ApiKeyPrincipal,
    id: string,
  ): Promise<{ kind: 'ok'; result: CheckResult } | Refusal> {
    const owned = await ownedRow(principal, id);
    if (owned.kind === 'refused') return owned;
    const result = await apply(owned.row.id, 'manual', await ask(owned.row, 'manual', undefined));
    return result ? { kind: 'ok', result } : monitorNotFound(id);
  }

  /** The latest changes of a key's monitors, newest first, with the number and reference each concerns. */
  async function changes(
    principal: ApiKeyPrincipal,
    options: { since?: string; limit: number },
  ): Promise<Array<ChangeView & { monitor_id: string; vat_number: string; reference: string | null }>> {
    const rows = await repository.recentChanges(ownerOf(principal), options.limit, options.since ?? null);
    return rows.map((c) => ({
      ...changeView(c),
      monitor_id: c.monitor_id,
      vat_number: c.vat_number,
      reference: c.reference,
    }));
  }

  /** How many monitors the key has, per status and stale, and its plan's cap. */
  async function summary(principal: ApiKeyPrincipal) {
    const counts = { total: 0, valid: 0, invalid: 0, unknown: 0, stale: 0, max: capOf(deps, principal) };
    for (const row of await repository.summary(ownerOf(principal))) {
      counts.total += row.n;
      if (row.status === 'valid' || row.status === 'invalid' || row.status === 'unknown')
        counts[row.status] += row.n;
      if (row.stale === 1) counts.stale += row.n;
    }
    return counts;
  }

  /**
   * Claims due monitors for this instance's scheduler: earliest first, never more than
   * `perCountry` checks of one prefix in flight here, so a member state's registry always has room
   * for interactive validations.
   */
  async function claimDue(limit: number): Promise<MonitorsTable[]> {
    const now = clock.now();
    const skipCountries = [...running].filter(([, n]) => n >= deps.perCountry).map(([c]) => c);
    const claimed = await repository.claimDue({
      now: now.toISOString(),
      leaseUntil: new Date(now.getTime() + deps.leaseMs).toISOString(),
      workerId,
      limit,
      skipCountries,
      capacity: (country) => deps.perCountry - (running.get(country) ?? 0),
    });
    const kept: MonitorsTable[] = [];
    const excess: string[] = [];
    const taking = new Map<string, number>();
    for (const row of claimed) {
      const n = (running.get(row.country) ?? 0) + (taking.get(row.country) ?? 0);
      if (n >= deps.perCountry) excess.push(row.id);
      else {
        taking.set(row.country, (taking.get(row.country) ?? 0) + 1);
        kept.push(row);
      }
    }
    // Counted as in flight from the claim on, so the next claim sees them.
    for (const row of kept) bump(row.country, 1);
    await repository.release(excess, workerId);
    return kept;
  }

  /**
   * Runs one claimed scheduled check; a check interrupted by shutdown is given back unwritten. The
   * monitors of a key that may no longer be used (revoked, expired, rolled past its overlap, its
   * account disabled) are not checked, and a check under way when it stopped is not written (the
   * key's state is cached by the keys module, not read per check): a revoked or rolled key's
   * monitors are paused for good, those of an expired key or a disabled account are looked at again
   * an hour later (an operator may extend the key or enable the account). Nor are the demo key's
   * monitors past their retention checked (they are purged).
   */
  async function runClaimed(row: MonitorsTable, signal?: AbortSignal): Promise<void> {
    try {
      const expired = row.key_id === PLAYGROUND_PRINCIPAL.id && row.created_at <= playgroundCutoff();
      if (expired) return await pause(row.id, NEVER);
      if (await stopped(row.key_id, row.id)) return;
      let asked: { outcome: ValidationOutcome; latencyMs: number };
      try {
        asked = await ask(row, 'scheduled', signal);
      } catch (error) {
        if (signal?.aborted) return await repository.release([row.id], workerId);
        throw error;
      }
      if (signal?.aborted && asked.outcome.kind !== 'ok') return await repository.release([row.id], workerId);
      // A key stopped while its check was with the registry: nothing is written, no change is emitted.
      if (await stopped(row.key_id, row.id)) return;
      await apply(row.id, 'scheduled', asked);
    } finally {
      bump(row.country, -1);
    }
  }

  /** Checks of each prefix in flight in this process (metrics, tests). */
  function inFlight(): Record<string, number> {
    return Object.fromEntries(running);
  }

  /** Deletes checks older than the retention, in batches; returns how many. */
  async function purgeHistory(batchSize = 1_000): Promise<number> {
    const before = new Date(clock.now().getTime() - deps.checkRetentionDays * DAY_MS).toISOString();
    return deleteInBatches(batchSize, () => repository.deleteChecksBefore(before, batchSize));
  }

  /**
   * Deletes the playground demo key's monitors created more than `PLAYGROUND_RETENTION_MS` ago, with
   * their checks and changes, in batches; returns how many monitors.
   */
  async function purgePlayground(batchSize = 1_000): Promise<number> {
    const by = playgroundCutoff();
    return deleteInBatches(batchSize, () =>
      repository.deleteCreatedBy(PLAYGROUND_PRINCIPAL.id, by, batchSize),
    );
  }

  return {
    ...creation,
    list,
    get,
    update,
    remove,
    checkNow,
    changes,
    summary,
    claimDue,
    runClaimed,
    purgeHistory,
    purgePlayground,
    inFlight,
  };
}

export type MonitorsService = ReturnType<typeof createMonitorsService>;
