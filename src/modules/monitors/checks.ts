import type { MonitorChangesTable, MonitorChecksTable, MonitorsTable } from '../../db/schema.js';
import type { DomainEvent, EventType } from '../events/index.js';
import { type ApiKeyPrincipal, principalOfStoredWork } from '../keys/index.js';
import type { PeppolData, PeppolOutcome } from '../peppol/index.js';
import type { ValidationOutcome } from '../validation/index.js';
import { detectChanges, type Finding, findingOf } from './changes.js';
import type { MonitorsDeps } from './deps.js';
import {
  nextPeppolState,
  type PeppolState,
  peppolAnswerOf,
  peppolPartOf,
  storedPeppolState,
} from './peppol.js';
import type { MonitorUpdate } from './repository.js';
import { type Interval, nextCheckAt, retryAt } from './schedule.js';
import { monitorTestAnswers } from './test-answers.js';
import {
  type CheckResult,
  type CheckTrigger,
  type CheckView,
  changeView,
  checkView,
  monitorView,
} from './views.js';

/** What a check asked the validation path, and how long it took. */
export interface Asked {
  outcome: ValidationOutcome;
  latencyMs: number;
  /** The Peppol look-up of a monitor with `peppol` (null otherwise, or when it threw). */
  peppol?: PeppolOutcome | null;
}

/** A Peppol change a check found: the `peppol.changed` event's before and after. */
interface PeppolChange {
  before: PeppolState;
  after: PeppolState;
  answer: PeppolData;
}

type AnsweredOutcome = Extract<ValidationOutcome, { kind: 'ok' }>;
type OwnWrites = NonNullable<Parameters<MonitorsDeps['outbox']['record']>[0]['own']>;
type Transaction = Parameters<OwnWrites>[0];
/** What a check records besides its own rows (its events, and for an answer its audit record). */
type Facts = Exclude<Awaited<ReturnType<OwnWrites>>, false | undefined>;

/** What one check writes with: the monitor as read in its transaction, the answer, and the ids. */
interface CheckContext {
  row: MonitorsTable;
  trigger: CheckTrigger;
  asked: Asked;
  finding: Finding;
  ok: AnsweredOutcome | null;
  now: Date;
  nowIso: string;
  checkId: string;
  requestId: string;
  /** A scheduled or retried check gives its lease back with its write. */
  release: MonitorUpdate;
}

/** A check's outcome: the answer's, a national register's (while VIES could not answer), or `unavailable`. */
function checkOutcome(finding: Finding): CheckView['outcome'] {
  const answered = finding.ok ? finding : finding.register;
  if (!answered) return 'unavailable';
  return answered.valid ? 'valid' : 'invalid';
}

/**
 * A monitor's check: the question to the one validation path, and the writing of its outcome
 * (state, check row, changes, audit record, events) in one transaction. Counts the checks of each
 * prefix this process runs.
 */
export function createMonitorChecks(deps: MonitorsDeps) {
  const { repository, validation, clock, ids, workerId } = deps;
  const random = deps.random ?? Math.random;
  /** Checks of each prefix this process runs now (scheduled and others alike). */
  const inFlight = new Map<string, number>();

  function bump(country: string, by: number): void {
    const n = (inFlight.get(country) ?? 0) + by;
    if (n <= 0) inFlight.delete(country);
    else inFlight.set(country, n);
  }

  async function ask(
    row: MonitorsTable,
    trigger: CheckTrigger,
    signal: AbortSignal | undefined,
  ): Promise<Asked> {
    const started = performance.now();
    const override =
      row.mode === 'test'
        ? monitorTestAnswers({ clock, fallback: deps.testAnswers, check: row.checks + 1 })
        : undefined;
    // Scheduled checks are counted from their claim on (see `claimDue`).
    const counted = trigger !== 'scheduled';
    if (counted) bump(row.country, 1);
    try {
      const principal = principalOfStoredWork(row);
      // A monitor with `peppol` asks Peppol alongside the registry; its outage never fails the check.
      const peppolAsked = row.peppol === 1 ? askPeppol(row, principal, signal) : null;
      const outcome = await validation.validate(
        {
          vatNumber: row.vat_number,
          // The first check may use a fresh stored answer; every later one asks the registry.
          useCache: row.checks === 0,
          priority: trigger === 'scheduled' ? 'background' : 'interactive',
        },
        principal,
        signal,
        override,
      );
      const latencyMs = Math.round((performance.now() - started) * 100) / 100;
      return { outcome, latencyMs, peppol: peppolAsked ? await peppolAsked : null };
    } finally {
      if (counted) bump(row.country, -1);
    }
  }

  async function askPeppol(
    row: MonitorsTable,
    principal: ApiKeyPrincipal,
    signal: AbortSignal | undefined,
  ): Promise<PeppolOutcome | null> {
    try {
      return await deps.peppol.lookup(
        { identifier: row.vat_number, useCache: row.checks === 0, ...(signal ? { signal } : {}) },
        principal,
      );
    } catch {
      return null;
    }
  }

  function eventOf(
    row: MonitorsTable,
    type: EventType,
    data: CheckResult | (CheckResult & { peppol: PeppolChange }),
    requestId: string,
  ): DomainEvent {
    return {
      accountId: row.account_id,
      keyId: row.key_id,
      type,
      payload: JSON.stringify({ data, meta: { request_id: requestId } }),
    };
  }

  /**
   * The Peppol step of a check of a monitor with `peppol`: the state its look-up gives and whether
   * it changed. Nothing when the look-up gave no answer that may change it (an outage).
   */
  function peppolStep(
    row: MonitorsTable,
    asked: Asked,
    nowIso: string,
  ): { update: MonitorUpdate; change: PeppolChange | null } {
    const answer = row.peppol === 1 ? peppolAnswerOf(asked.peppol ?? null) : null;
    if (!answer) return { update: {}, change: null };
    const before = storedPeppolState(row);
    const next = nextPeppolState(before, answer);
    return {
      update: { peppol_state: JSON.stringify(next.state), peppol_checked_at: nowIso },
      change: next.changed && before ? { before, after: next.state, answer } : null,
    };
  }

  /** A Peppol change as a row of the monitor's changes (before and after as JSON text). */
  function peppolChangeRow(row: MonitorsTable, change: PeppolChange, checkId: string, nowIso: string) {
    return {
      id: ids.uuid(),
      monitor_id: row.id,
      key_id: row.key_id,
      check_id: checkId,
      kind: 'peppol_changed',
      before: JSON.stringify(change.before),
      after: JSON.stringify(change.after),
      detected_at: nowIso,
    } satisfies MonitorChangesTable;
  }

  /** What one check writes with: the monitor as read in the transaction, the answer, and the ids. */
  function contextOf(row: MonitorsTable, trigger: CheckTrigger, asked: Asked): CheckContext {
    const now = clock.now();
    return {
      row,
      trigger,
      asked,
      finding: findingOf(asked.outcome),
      ok: asked.outcome.kind === 'ok' ? asked.outcome : null,
      now,
      nowIso: now.toISOString(),
      checkId: ids.uuid(),
      requestId: ids.uuid(),
      release: trigger === 'manual' ? {} : { locked_until: null, claimed_by: null },
    };
  }

  /** The monitor's state after a check with an answer (the next check on its schedule) and the changes found. */
  function answeredState(c: CheckContext, finding: Extract<Finding, { ok: true }>) {
    const { row, nowIso, checkId } = c;
    const changes: MonitorChangesTable[] = detectChanges(row, finding).map((change) => ({
      id: ids.uuid(),
      monitor_id: row.id,
      key_id: row.key_id,
      check_id: checkId,
      kind: change.type,
      before: change.before,
      after: change.after,
      detected_at: nowIso,
    }));
    const update: MonitorUpdate = {
      status: finding.valid ? 'valid' : 'invalid',
      // The last known company data is kept when an answer has none (invalid, or `---`).
      name: finding.name ?? row.name,
      address: finding.address ?? row.address,
      source: c.ok?.meta.source ?? row.source,
      stale: 0,
      checks: row.checks + 1,
      failures: 0,
      last_checked_at: nowIso,
      last_attempt_at: nowIso,
      failing_since: null,
      last_error: null,
      ...(changes.length > 0 ? { last_change_at: nowIso } : {}),
      next_check_at: new Date(
        nextCheckAt({
          id: row.id,
          interval: row.interval as Interval,
          country: row.country,
          checkedAtMs: c.now.getTime(),
          windows: deps.quietWindows,
        }),
      ).toISOString(),
      ...c.release,
    };
    return { update, changes, becameStale: false };
  }

  /** The monitor's state after a check without an answer: a retry with backoff, stale once failing long enough. */
  function failedState(c: CheckContext, finding: Extract<Finding, { ok: false }>) {
    const { row, now, nowIso } = c;
    const failures = row.failures + 1;
    const since = Date.parse(row.last_checked_at ?? row.created_at);
    // Test keys flag a monitor at its first failed check, so integrators see the event at once.
    const staleAfter = row.mode === 'test' ? 0 : deps.staleAfterMs;
    const becameStale = row.stale === 0 && now.getTime() - since >= staleAfter;
    const update: MonitorUpdate = {
      stale: row.stale === 1 || becameStale ? 1 : 0,
      checks: row.checks + 1,
      failures,
      last_attempt_at: nowIso,
      failing_since: row.failing_since ?? nowIso,
      last_error: finding.message,
      next_check_at: new Date(
        retryAt({
          nowMs: now.getTime(),
          failures,
          baseMs: deps.retryBackoffMs,
          interval: row.interval as Interval,
          country: row.country,
          windows: deps.quietWindows,
          random,
        }),
      ).toISOString(),
      ...c.release,
    };
    return { update, changes: [] as MonitorChangesTable[], becameStale };
  }

  /** The check's own row: its outcome, source, what it found and its error. */
  function checkRow({
    row,
    trigger,
    finding,
    ok,
    checkId,
    requestId,
    nowIso,
  }: CheckContext): MonitorChecksTable {
    return {
      id: checkId,
      monitor_id: row.id,
      trigger,
      outcome: checkOutcome(finding),
      source: ok?.meta.source ?? null,
      source_status: ok?.meta.source_status ?? null,
      name: finding.ok ? finding.name : (finding.register?.name ?? null),
      address: finding.ok ? finding.address : (finding.register?.address ?? null),
      error: finding.ok ? null : finding.message,
      request_id: ok ? requestId : null,
      checked_at: nowIso,
    };
  }

  /**
   * The facts of a check with an answer besides its events: the fresh registry answer and the same
   * evidence as a validation, the validate response of this answer under the monitor's key.
   */
  function answerFacts({ row, trigger, asked, requestId }: CheckContext, ok: AnsweredOutcome): Facts {
    const peppolAnswer = row.peppol === 1 ? peppolPartOf(asked.peppol ?? null) : null;
    return {
      ...(ok.fresh ? { answers: [ok.fresh] } : {}),
      audit: {
        principal: principalOfStoredWork(row),
        requestId,
        endpoint: 'monitor_check',
        responseJson: JSON.stringify({
          data: peppolAnswer ? { ...ok.data, peppol: peppolAnswer } : ok.data,
          meta: { request_id: requestId, latency_ms: asked.latencyMs, ...ok.meta },
        }),
        requestBody: { vat_number: row.vat_number, monitor_id: row.id, trigger },
        latencyMs: asked.latencyMs,
        statusCode: 200,
        valid: ok.data.valid,
      },
    };
  }

  /**
   * A check's writes in the transaction: the monitor's state, its check row and changes; its result
   * and the facts to record with it. False when the monitor is gone, or a scheduled check's lease
   * was taken over by another instance.
   */
  async function writeCheck(
    trx: Transaction,
    monitorId: string,
    trigger: CheckTrigger,
    asked: Asked,
  ): Promise<{ result: CheckResult; facts: Facts } | false> {
    const row = await repository.findForUpdate(monitorId, trx);
    if (!row) return false;
    if (trigger !== 'manual' && row.claimed_by !== workerId) return false;
    const c = contextOf(row, trigger, asked);
    const state = c.finding.ok ? answeredState(c, c.finding) : failedState(c, c.finding);
    const peppol = peppolStep(row, asked, c.nowIso);
    const changes = peppol.change
      ? [...state.changes, peppolChangeRow(row, peppol.change, c.checkId, c.nowIso)]
      : state.changes;
    const update: MonitorUpdate = {
      ...state.update,
      ...(peppol.change ? { last_change_at: c.nowIso } : {}),
      ...peppol.update,
    };
    const check = checkRow(c);
    await repository.update(row.id, update, trx);
    await repository.insertCheck(check, trx);
    await repository.insertChanges(changes, trx);
    const result: CheckResult = {
      monitor: monitorView({ ...row, ...update } as MonitorsTable),
      check: checkView(check),
      changes: changes.map(changeView),
    };
    const events: DomainEvent[] = [];
    if (state.changes.length > 0) events.push(eventOf(row, 'vat_number.changed', result, c.requestId));
    if (state.becameStale) events.push(eventOf(row, 'vat_number.check_failed', result, c.requestId));
    if (peppol.change)
      events.push(eventOf(row, 'peppol.changed', { ...result, peppol: peppol.change }, c.requestId));
    return { result, facts: c.ok ? { events, ...answerFacts(c, c.ok) } : { events } };
  }

  /**
   * Stores a check's outcome: compared with the monitor's state as it is now (read in the same
   * transaction, locked on PostgreSQL, so two checks of one monitor never report the same change),
   * with its check row, its changes, its audit record and its events, all or nothing. A scheduled
   * check whose lease was taken over by another instance writes nothing (null).
   */
  async function apply(monitorId: string, trigger: CheckTrigger, asked: Asked): Promise<CheckResult | null> {
    let stored = null as CheckResult | null;
    await deps.outbox.record({
      own: async (trx) => {
        const written = await writeCheck(trx, monitorId, trigger, asked);
        if (!written) return false;
        stored = written.result;
        return written.facts;
      },
    });
    return stored;
  }

  return { ask, apply, bump, inFlight };
}

export type MonitorChecks = ReturnType<typeof createMonitorChecks>;
