import type { QuietWindow } from '../../config.js';
import type { Db } from '../../db/database.js';
import { deleteInBatches } from '../../db/delete-in-batches.js';
import type { MonitorChangesTable, MonitorChecksTable, MonitorsTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import type { DomainEvent, EventType } from '../events/index.js';
import { type ApiKeyPrincipal, principalOfStoredWork } from '../keys/index.js';
import type { Outbox } from '../outbox/index.js';
import { PLAYGROUND_PRINCIPAL, PLAYGROUND_RETENTION_MS } from '../playground/index.js';
import type { AnswerSource, ValidationOutcome, ValidationService } from '../validation/index.js';
import { parseVatNumber } from '../vat-numbers/index.js';
import type { MonitorsRepository, MonitorUpdate, Owner } from './repository.js';
import { avoidQuiet, type Interval, nextCheckAt, retryAt } from './schedule.js';
import { monitorTestAnswers } from './test-answers.js';

/** Most numbers in one bulk request. */
export const BULK_LIMIT = 10_000;
/** Checks and changes shown with a monitor. */
const HISTORY_LIMIT = 50;
/** When the monitors of a revoked key are due: never (a key is not un-revoked). */
const NEVER = '9999-12-31T00:00:00.000Z';
const DAY_MS = 86_400_000;

export type MonitorStatus = 'valid' | 'invalid' | 'unknown';
export type ChangeType = 'became_invalid' | 'became_valid' | 'name_changed' | 'address_changed';
export type CheckTrigger = 'created' | 'scheduled' | 'manual';

export interface Company {
  name: string | null;
  address: string | null;
}

export interface MonitorView {
  id: string;
  vat_number: string;
  country_code: string;
  interval: Interval;
  reference: string | null;
  metadata: Record<string, unknown> | null;
  status: MonitorStatus;
  stale: boolean;
  company: Company | null;
  source: string | null;
  last_checked_at: string | null;
  last_attempt_at: string | null;
  failing_since: string | null;
  last_error: string | null;
  last_change_at: string | null;
  next_check_at: string;
  created_at: string;
}

export interface CheckView {
  id: string;
  trigger: CheckTrigger;
  outcome: 'valid' | 'invalid' | 'unavailable';
  source: string | null;
  source_status: string | null;
  company: Company | null;
  error: string | null;
  /** The check's audit record (`GET /v1/audits/{request_id}`) when an answer was obtained. */
  request_id: string | null;
  checked_at: string;
}

export interface ChangeView {
  id: string;
  type: ChangeType;
  before: string | null;
  after: string | null;
  check_id: string;
  detected_at: string;
}

export interface CheckResult {
  monitor: MonitorView;
  check: CheckView;
  changes: ChangeView[];
}

export type CreateOutcome =
  | { kind: 'created'; result: CheckResult }
  | { kind: 'existing'; monitor: MonitorView }
  | { kind: 'limit_reached'; max: number }
  | Extract<ValidationOutcome, { kind: 'invalid_format' | 'country_unsupported' }>;

export type BulkRow =
  | { ok: true; id: string; vat_number: string; created: boolean }
  | { ok: false; vat_number: string; error: { code: string; message: string } };

export interface BulkResult {
  summary: { total: number; created: number; existing: number; failed: number };
  results: BulkRow[];
}

export interface MonitorInput {
  vat_number: string;
  interval: Interval;
  reference?: string;
  metadata?: Record<string, unknown>;
}

export interface MonitorsDeps {
  db: Db;
  repository: MonitorsRepository;
  validation: Pick<ValidationService, 'validate' | 'parse'>;
  /** The validate test table, which test-mode monitors fall back on for other numbers. */
  testAnswers: AnswerSource;
  /** Records each check with its audit record, events and registry answer. */
  outbox: Pick<Outbox, 'record'>;
  clock: Clock;
  ids: IdGenerator;
  /** Identifies this process's leases. */
  workerId: string;
  /** Whether a monitor's key is still active (the monitors of a revoked key are not checked again). */
  keyActive: (keyId: string) => Promise<boolean>;
  maxPerKey: Readonly<Record<'pro' | 'business', number>>;
  perCountry: number;
  leaseMs: number;
  retryBackoffMs: number;
  staleAfterMs: number;
  /** Days a check is kept in a monitor's history (its changes are kept as long as the monitor). */
  checkRetentionDays: number;
  quietWindows: ReadonlyArray<QuietWindow>;
  /** Called when monitors were queued for their first check (wakes the scheduler). */
  onQueued?: () => void;
  random?: () => number;
}

function companyOf(name: string | null, address: string | null): Company | null {
  return name === null && address === null ? null : { name, address };
}

/** Compared without case and spacing differences, which registries produce without any real change. */
function comparable(value: string | null): string | null {
  return value === null ? null : value.replace(/\s+/g, ' ').trim().toUpperCase();
}

export function monitorView(row: MonitorsTable): MonitorView {
  const parsed = parseVatNumber(row.vat_number);
  return {
    id: row.id,
    vat_number: row.vat_number,
    country_code: parsed.ok ? parsed.isoCountry : row.country,
    interval: row.interval as Interval,
    reference: row.reference,
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, unknown>),
    status: row.status as MonitorStatus,
    stale: row.stale === 1,
    company: companyOf(row.name, row.address),
    source: row.source,
    last_checked_at: row.last_checked_at,
    last_attempt_at: row.last_attempt_at,
    failing_since: row.failing_since,
    last_error: row.last_error,
    last_change_at: row.last_change_at,
    next_check_at: row.next_check_at,
    created_at: row.created_at,
  };
}

function checkView(row: MonitorChecksTable): CheckView {
  return {
    id: row.id,
    trigger: row.trigger as CheckTrigger,
    outcome: row.outcome as CheckView['outcome'],
    source: row.source,
    source_status: row.source_status,
    company: companyOf(row.name, row.address),
    error: row.error,
    request_id: row.request_id,
    checked_at: row.checked_at,
  };
}

function changeView(row: MonitorChangesTable): ChangeView {
  return {
    id: row.id,
    type: row.kind as ChangeType,
    before: row.before,
    after: row.after,
    check_id: row.check_id,
    detected_at: row.detected_at,
  };
}

/** What a check found, before it is compared with the monitor's last known state. */
type Finding =
  | { ok: true; valid: boolean; name: string | null; address: string | null; outcome: ValidationOutcome }
  | { ok: false; message: string; outcome: ValidationOutcome | null };

function findingOf(outcome: ValidationOutcome): Finding {
  switch (outcome.kind) {
    case 'ok':
      // A stored answer served because the registry is down is not a check: the state is unknown now.
      if (outcome.meta.source_status === 'degraded') {
        return {
          ok: false,
          message: `The ${outcome.meta.source} registry did not answer; only an answer stored at ${outcome.meta.cached_at ?? outcome.data.verified_at} is available.`,
          outcome,
        };
      }
      return {
        ok: true,
        valid: outcome.data.valid,
        name: outcome.data.company?.name ?? null,
        address: outcome.data.company?.address ?? null,
        outcome,
      };
    case 'unavailable':
    case 'rate_limited':
    case 'requester_rejected':
    case 'invalid_format':
    case 'country_unsupported':
      return { ok: false, message: outcome.message, outcome };
  }
}

/** The changes between a monitor's last known state and a successful check. */
export function detectChanges(
  before: Pick<MonitorsTable, 'status' | 'name' | 'address'>,
  after: { valid: boolean; name: string | null; address: string | null },
): Array<{ type: ChangeType; before: string | null; after: string | null }> {
  if (before.status === 'unknown') return [];
  if (before.status === 'valid' && !after.valid)
    return [{ type: 'became_invalid', before: 'valid', after: 'invalid' }];
  if (before.status === 'invalid' && after.valid)
    return [{ type: 'became_valid', before: 'invalid', after: 'valid' }];
  if (!after.valid) return [];
  const changes: Array<{ type: ChangeType; before: string | null; after: string | null }> = [];
  // A registry that stops sharing a value (`---`) has not changed it: only two known values are compared.
  if (before.name !== null && after.name !== null && comparable(before.name) !== comparable(after.name))
    changes.push({ type: 'name_changed', before: before.name, after: after.name });
  if (
    before.address !== null &&
    after.address !== null &&
    comparable(before.address) !== comparable(after.address)
  )
    changes.push({ type: 'address_changed', before: before.address, after: after.address });
  return changes;
}

/**
 * Monitoring: VAT numbers of a key re-checked on a durable, spread schedule through the one
 * validation path (cache, coalescing, per-country limits and breakers), each check compared with
 * the last known state; changes and lasting failures are recorded and sent as webhook events.
 */
export function createMonitorsService(deps: MonitorsDeps) {
  const { db, repository, validation, clock, ids, workerId } = deps;
  const random = deps.random ?? Math.random;

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
  /** Checks of each prefix this process runs now (scheduled and others alike). */
  const inFlight = new Map<string, number>();

  function bump(country: string, by: number): void {
    const n = (inFlight.get(country) ?? 0) + by;
    if (n <= 0) inFlight.delete(country);
    else inFlight.set(country, n);
  }

  function maxFor(principal: ApiKeyPrincipal): number {
    return principal.plan === 'pro' || principal.plan === 'business' ? deps.maxPerKey[principal.plan] : 0;
  }

  function newRow(principal: ApiKeyPrincipal, input: MonitorInput, normalised: string, country: string) {
    const now = clock.now().toISOString();
    const row: MonitorsTable = {
      id: ids.uuid(),
      key_id: principal.id,
      account_id: principal.accountId,
      plan: principal.plan,
      mode: principal.mode,
      vat_number: normalised,
      country,
      interval: input.interval,
      reference: input.reference ?? null,
      metadata: input.metadata === undefined ? null : JSON.stringify(input.metadata),
      status: 'unknown',
      name: null,
      address: null,
      source: null,
      stale: 0,
      checks: 0,
      failures: 0,
      last_checked_at: null,
      last_attempt_at: null,
      failing_since: null,
      last_error: null,
      last_change_at: null,
      // The first check is due at once, unless the registry is in a quiet window now.
      next_check_at: new Date(avoidQuiet(Date.parse(now), country, deps.quietWindows)).toISOString(),
      locked_until: null,
      claimed_by: null,
      created_at: now,
    };
    return row;
  }

  async function ask(
    row: MonitorsTable,
    trigger: CheckTrigger,
    signal: AbortSignal | undefined,
  ): Promise<{ outcome: ValidationOutcome; latencyMs: number }> {
    const started = performance.now();
    const override =
      row.mode === 'test'
        ? monitorTestAnswers({ clock, fallback: deps.testAnswers, check: row.checks + 1 })
        : undefined;
    // Scheduled checks are counted from their claim on (see `claimDue`).
    const counted = trigger !== 'scheduled';
    if (counted) bump(row.country, 1);
    try {
      const outcome = await validation.validate(
        {
          vatNumber: row.vat_number,
          // The first check may use a fresh stored answer; every later one asks the registry.
          useCache: row.checks === 0,
          priority: trigger === 'scheduled' ? 'background' : 'interactive',
        },
        principalOfStoredWork(row),
        signal,
        override,
      );
      return { outcome, latencyMs: Math.round((performance.now() - started) * 100) / 100 };
    } finally {
      if (counted) bump(row.country, -1);
    }
  }

  function eventOf(row: MonitorsTable, type: EventType, result: CheckResult, requestId: string): DomainEvent {
    return {
      accountId: row.account_id,
      keyId: row.key_id,
      type,
      payload: JSON.stringify({ data: result, meta: { request_id: requestId } }),
    };
  }

  /**
   * Stores a check's outcome: compared with the monitor's state as it is now (read in the same
   * transaction, locked on PostgreSQL, so two checks of one monitor never report the same change),
   * with its check row, its changes, its audit record and its events, all or nothing. A scheduled
   * check whose lease was taken over by another instance writes nothing (null).
   */
  async function apply(
    monitorId: string,
    trigger: CheckTrigger,
    asked: { outcome: ValidationOutcome; latencyMs: number },
  ): Promise<CheckResult | null> {
    const finding = findingOf(asked.outcome);
    let stored = null as CheckResult | null;
    await deps.outbox.record({
      own: async (trx) => {
        const row = await repository.findForUpdate(monitorId, trx);
        if (!row) return false;
        if (trigger !== 'manual' && row.claimed_by !== workerId) return false;
        const now = clock.now();
        const nowIso = now.toISOString();
        const checkId = ids.uuid();
        const requestId = ids.uuid();
        const release = trigger === 'manual' ? {} : { locked_until: null, claimed_by: null };
        const ok = asked.outcome.kind === 'ok' ? asked.outcome : null;
        let update: MonitorUpdate;
        let changes: MonitorChangesTable[] = [];
        let becameStale = false;
        if (finding.ok) {
          changes = detectChanges(row, finding).map((c) => ({
            id: ids.uuid(),
            monitor_id: row.id,
            key_id: row.key_id,
            check_id: checkId,
            kind: c.type,
            before: c.before,
            after: c.after,
            detected_at: nowIso,
          }));
          update = {
            status: finding.valid ? 'valid' : 'invalid',
            // The last known company data is kept when an answer has none (invalid, or `---`).
            name: finding.name ?? row.name,
            address: finding.address ?? row.address,
            source: ok?.meta.source ?? row.source,
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
                checkedAtMs: now.getTime(),
                windows: deps.quietWindows,
              }),
            ).toISOString(),
            ...release,
          };
        } else {
          const failures = row.failures + 1;
          const since = Date.parse(row.last_checked_at ?? row.created_at);
          // Test keys flag a monitor at its first failed check, so integrators see the event at once.
          const staleAfter = row.mode === 'test' ? 0 : deps.staleAfterMs;
          becameStale = row.stale === 0 && now.getTime() - since >= staleAfter;
          update = {
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
            ...release,
          };
        }
        const check: MonitorChecksTable = {
          id: checkId,
          monitor_id: row.id,
          trigger,
          outcome: finding.ok ? (finding.valid ? 'valid' : 'invalid') : 'unavailable',
          source: ok?.meta.source ?? null,
          source_status: ok?.meta.source_status ?? null,
          name: finding.ok ? finding.name : null,
          address: finding.ok ? finding.address : null,
          error: finding.ok ? null : finding.message,
          request_id: ok ? requestId : null,
          checked_at: nowIso,
        };
        await repository.update(row.id, update, trx);
        await repository.insertCheck(check, trx);
        await repository.insertChanges(changes, trx);
        const result: CheckResult = {
          monitor: monitorView({ ...row, ...update } as MonitorsTable),
          check: checkView(check),
          changes: changes.map(changeView),
        };
        stored = result;
        const events: DomainEvent[] = [];
        if (changes.length > 0) events.push(eventOf(row, 'vat_number.changed', result, requestId));
        if (becameStale) events.push(eventOf(row, 'vat_number.check_failed', result, requestId));
        if (!ok) return { events };
        return {
          events,
          ...(ok.fresh ? { answers: [ok.fresh] } : {}),
          // The same evidence as a validation: the validate response of this answer, under the monitor's key.
          audit: {
            principal: principalOfStoredWork(row),
            requestId,
            endpoint: 'monitor_check',
            responseJson: JSON.stringify({
              data: ok.data,
              meta: { request_id: requestId, latency_ms: asked.latencyMs, ...ok.meta },
            }),
            requestBody: { vat_number: row.vat_number, monitor_id: row.id, trigger },
            latencyMs: asked.latencyMs,
            statusCode: 200,
            valid: ok.data.valid,
          },
        };
      },
    });
    return stored;
  }

  async function ownedRow(principal: ApiKeyPrincipal, id: string): Promise<MonitorsTable | null> {
    return (await repository.findOfKey(ownerOf(principal), id)) ?? null;
  }

  /** The demo key's monitors of these numbers past their retention make way for new ones. */
  async function clearExpired(owner: Owner, vatNumbers: string[]): Promise<void> {
    if (owner.createdAfter !== null)
      await repository.removeCreatedBy(owner.keyId, owner.createdAfter, vatNumbers);
  }

  return {
    /**
     * Starts monitoring a number and checks it at once (a fresh stored answer is used). The key's
     * existing monitor of the same number is returned as it is.
     */
    async create(principal: ApiKeyPrincipal, input: MonitorInput): Promise<CreateOutcome> {
      const parsed = validation.parse(input.vat_number, 'vat_number');
      if (!('ok' in parsed)) return parsed;
      const owner = ownerOf(principal);
      await clearExpired(owner, [parsed.vat.normalised]);
      const [existing] = await repository.findByNumbers(owner, [parsed.vat.normalised]);
      if (existing) {
        const row = await repository.findOfKey(owner, existing.id);
        if (row) return { kind: 'existing', monitor: monitorView(row) };
      }
      const max = maxFor(principal);
      if ((await repository.countForKey(owner)) >= max) return { kind: 'limit_reached', max };
      const row = newRow(principal, input, parsed.vat.normalised, parsed.vat.country);
      // Held under this instance's lease while its first check runs; if the process dies, the
      // lease expires and the scheduler makes the first check instead.
      const now = clock.now();
      row.locked_until = new Date(now.getTime() + deps.leaseMs).toISOString();
      row.claimed_by = workerId;
      await repository.insertMany([row]);
      const [stored] = await repository.findByNumbers(owner, [row.vat_number]);
      if (!stored || stored.id !== row.id) {
        // A concurrent request created it first.
        const other = stored ? await repository.findOfKey(owner, stored.id) : undefined;
        if (other) return { kind: 'existing', monitor: monitorView(other) };
      }
      const result = await apply(row.id, 'created', await ask(row, 'created', undefined));
      if (!result) throw new Error(`monitor ${row.id} lost its first check`);
      return { kind: 'created', result };
    },

    /**
     * Starts monitoring many numbers at once; each is checked soon after by the scheduler. Bad rows
     * (malformed, unsupported, over the plan's cap) are listed with their reasons, the others created.
     */
    async createMany(principal: ApiKeyPrincipal, inputs: MonitorInput[]): Promise<BulkResult> {
      const results: BulkRow[] = new Array(inputs.length);
      const fresh = new Map<string, { row: MonitorsTable; positions: number[] }>();
      inputs.forEach((input, i) => {
        const parsed = validation.parse(input.vat_number, 'vat_number');
        if (!('ok' in parsed)) {
          results[i] = {
            ok: false,
            vat_number: input.vat_number,
            error: { code: parsed.kind, message: parsed.message },
          };
          return;
        }
        const known = fresh.get(parsed.vat.normalised);
        if (known) known.positions.push(i);
        else
          fresh.set(parsed.vat.normalised, {
            row: newRow(principal, input, parsed.vat.normalised, parsed.vat.country),
            positions: [i],
          });
      });
      const numbers = [...fresh.keys()];
      const owner = ownerOf(principal);
      await clearExpired(owner, numbers);
      const existing = new Map(
        (await repository.findByNumbers(owner, numbers)).map((r) => [r.vat_number, r.id]),
      );
      let room = maxFor(principal) - (await repository.countForKey(owner));
      const toInsert: MonitorsTable[] = [];
      for (const [number, entry] of fresh) {
        if (existing.has(number)) continue;
        if (room <= 0) {
          for (const i of entry.positions)
            results[i] = {
              ok: false,
              vat_number: number,
              error: {
                code: 'monitor_limit_reached',
                message: `This key's plan monitors at most ${maxFor(principal).toLocaleString('en')} VAT numbers.`,
              },
            };
          fresh.delete(number);
          continue;
        }
        room -= 1;
        toInsert.push(entry.row);
      }
      await db.kysely.transaction().execute((trx) => repository.insertMany(toInsert, trx));
      const stored = new Map(
        (await repository.findByNumbers(owner, [...fresh.keys()])).map((r) => [r.vat_number, r.id]),
      );
      const inserted = new Set(toInsert.map((r) => r.id));
      let created = 0;
      let already = 0;
      for (const [number, entry] of fresh) {
        const id = stored.get(number);
        if (!id) continue;
        const isNew = inserted.has(id);
        entry.positions.forEach((i, n) => {
          // A number given twice is created by its first row; later rows find it existing.
          const first = isNew && n === 0;
          if (first) created += 1;
          else already += 1;
          results[i] = { ok: true, id, vat_number: number, created: first };
        });
      }
      if (created > 0) deps.onQueued?.();
      const failed = results.filter((r) => !r.ok).length;
      return { summary: { total: inputs.length, created, existing: already, failed }, results };
    },

    async list(
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
    },

    async get(
      principal: ApiKeyPrincipal,
      id: string,
    ): Promise<{ monitor: MonitorView; checks: CheckView[]; changes: ChangeView[] } | null> {
      const row = await ownedRow(principal, id);
      if (!row) return null;
      const [checks, changes] = await Promise.all([
        repository.checks(id, HISTORY_LIMIT),
        repository.changes(id, HISTORY_LIMIT),
      ]);
      return { monitor: monitorView(row), checks: checks.map(checkView), changes: changes.map(changeView) };
    },

    /**
     * Changes a monitor's interval, reference or metadata (`null` clears them). A new interval moves
     * the next check to the monitor's place in it, counted from the last check.
     */
    async update(
      principal: ApiKeyPrincipal,
      id: string,
      patch: { interval?: Interval; reference?: string | null; metadata?: Record<string, unknown> | null },
    ): Promise<MonitorView | null> {
      return db.kysely.transaction().execute(async (trx) => {
        const row = await repository.findOfKeyForUpdate(ownerOf(principal), id, trx);
        if (!row) return null;
        const update: MonitorUpdate = {};
        if (patch.reference !== undefined) update.reference = patch.reference;
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
        if (Object.keys(update).length > 0) await repository.update(row.id, update, trx);
        return monitorView({ ...row, ...update } as MonitorsTable);
      });
    },

    async remove(principal: ApiKeyPrincipal, id: string): Promise<boolean> {
      const owner = ownerOf(principal);
      return db.kysely.transaction().execute((trx) => repository.remove(id, owner, trx));
    },

    /** Checks a monitor now (a live registry call) and answers with the check and any change. */
    async checkNow(principal: ApiKeyPrincipal, id: string): Promise<CheckResult | null> {
      const row = await ownedRow(principal, id);
      if (!row) return null;
      return apply(row.id, 'manual', await ask(row, 'manual', undefined));
    },

    /** The latest changes of a key's monitors, newest first, with the number and reference each concerns. */
    async changes(
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
    },

    /** How many monitors the key has, per status and stale, and its plan's cap. */
    async summary(principal: ApiKeyPrincipal) {
      const counts = { total: 0, valid: 0, invalid: 0, unknown: 0, stale: 0, max: maxFor(principal) };
      for (const row of await repository.summary(ownerOf(principal))) {
        counts.total += row.n;
        if (row.status === 'valid' || row.status === 'invalid' || row.status === 'unknown')
          counts[row.status] += row.n;
        if (row.stale === 1) counts.stale += row.n;
      }
      return counts;
    },

    /**
     * Claims due monitors for this instance's scheduler: earliest first, never more than
     * `perCountry` checks of one prefix in flight here, so a member state's registry always has room
     * for interactive validations.
     */
    async claimDue(limit: number): Promise<MonitorsTable[]> {
      const now = clock.now();
      const skipCountries = [...inFlight].filter(([, n]) => n >= deps.perCountry).map(([c]) => c);
      const claimed = await repository.claimDue({
        now: now.toISOString(),
        leaseUntil: new Date(now.getTime() + deps.leaseMs).toISOString(),
        workerId,
        limit,
        skipCountries,
        capacity: (country) => deps.perCountry - (inFlight.get(country) ?? 0),
      });
      const kept: MonitorsTable[] = [];
      const excess: string[] = [];
      const taking = new Map<string, number>();
      for (const row of claimed) {
        const n = (inFlight.get(row.country) ?? 0) + (taking.get(row.country) ?? 0);
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
    },

    /**
     * Runs one claimed scheduled check; a check interrupted by shutdown is given back unwritten. The
     * monitors of a revoked key are not checked again (the key's state is cached by the keys module,
     * not read per check), nor are the demo key's monitors past their retention (they are purged).
     */
    async runClaimed(row: MonitorsTable, signal?: AbortSignal): Promise<void> {
      try {
        const expired = row.key_id === PLAYGROUND_PRINCIPAL.id && row.created_at <= playgroundCutoff();
        if (expired || !(await deps.keyActive(row.key_id))) {
          await repository.update(row.id, { next_check_at: NEVER, locked_until: null, claimed_by: null });
          return;
        }
        let asked: { outcome: ValidationOutcome; latencyMs: number };
        try {
          asked = await ask(row, 'scheduled', signal);
        } catch (error) {
          if (signal?.aborted) return await repository.release([row.id], workerId);
          throw error;
        }
        if (signal?.aborted && asked.outcome.kind !== 'ok')
          return await repository.release([row.id], workerId);
        await apply(row.id, 'scheduled', asked);
      } finally {
        bump(row.country, -1);
      }
    },

    /** Deletes checks older than the retention, in batches; returns how many. */
    async purgeHistory(batchSize = 1_000): Promise<number> {
      const before = new Date(clock.now().getTime() - deps.checkRetentionDays * DAY_MS).toISOString();
      return deleteInBatches(batchSize, () => repository.deleteChecksBefore(before, batchSize));
    },

    /**
     * Deletes the playground demo key's monitors created more than `PLAYGROUND_RETENTION_MS` ago, with
     * their checks and changes, in batches; returns how many monitors.
     */
    async purgePlayground(batchSize = 1_000): Promise<number> {
      const by = playgroundCutoff();
      return deleteInBatches(batchSize, () =>
        repository.deleteCreatedBy(PLAYGROUND_PRINCIPAL.id, by, batchSize),
      );
    },

    /** Checks of each prefix in flight in this process (metrics, tests). */
    inFlight(): Record<string, number> {
      return Object.fromEntries(inFlight);
    },
  };
}

export type MonitorsService = ReturnType<typeof createMonitorsService>;
