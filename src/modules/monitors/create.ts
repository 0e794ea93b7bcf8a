import type { MonitorsTable } from '../../db/schema.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import type { ValidationOutcome } from '../validation/index.js';
import type { MonitorChecks } from './checks.js';
import type { MonitorsDeps } from './deps.js';
import type { Owner } from './repository.js';
import { avoidQuiet, type Interval } from './schedule.js';
import { type CheckResult, type MonitorView, monitorView } from './views.js';

/** Most numbers in one bulk request. */
export const BULK_LIMIT = 10_000;

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

/** The most monitors a key of this plan may have (plans without monitoring: none). */
export function capOf(deps: Pick<MonitorsDeps, 'maxPerKey'>, principal: ApiKeyPrincipal): number {
  return principal.plan === 'pro' || principal.plan === 'business' ? deps.maxPerKey[principal.plan] : 0;
}

/** Creating monitors, one with its first check at once, or many queued for the scheduler. */
export function createMonitorCreation(
  deps: MonitorsDeps,
  checks: Pick<MonitorChecks, 'ask' | 'apply'>,
  ownerOf: (principal: ApiKeyPrincipal) => Owner,
) {
  const { db, repository, validation, clock, ids, workerId } = deps;
  const { ask, apply } = checks;

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
      const max = capOf(deps, principal);
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
      let room = capOf(deps, principal) - (await repository.countForKey(owner));
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
                message: `This key's plan monitors at most ${capOf(deps, principal).toLocaleString('en')} VAT numbers.`,
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
  };
}
