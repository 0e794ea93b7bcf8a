import type { Kysely } from 'kysely';
import type { Database, MonitorsTable } from '../../db/schema.js';
import { sha256Hex } from '../../lib/crypto.js';
import type { ApiKeyPrincipal } from '../keys/index.js';
import { PLAYGROUND_MONITOR_LIMIT } from '../playground/index.js';
import type { ValidationRefusal } from '../validation/index.js';
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
  | ({ kind: 'limit_reached' } & MonitorLimit)
  /** Not a possible VAT number, or one of a country this service cannot validate. */
  | ValidationRefusal;

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
  /** Also check Peppol reachability on the schedule (`peppol.changed` on a change). */
  peppol?: boolean;
}

/** The most monitors a key of this plan may have (plans without monitoring: none). */
export function capOf(deps: Pick<MonitorsDeps, 'maxPerKey'>, principal: ApiKeyPrincipal): number {
  return principal.plan === 'pro' || principal.plan === 'business' ? deps.maxPerKey[principal.plan] : 0;
}

/** The cap a creation reached: the plan's per key, or the demo key's per visitor address. */
export interface MonitorLimit {
  scope: 'key' | 'visitor';
  max: number;
}

/** Why a monitor was not created over a cap, in words (the `monitor_limit_reached` refusal). */
export function limitMessage(limit: MonitorLimit): string {
  return limit.scope === 'visitor'
    ? `The playground's demo key monitors at most ${limit.max.toLocaleString('en')} VAT numbers per address (each kept 24 hours); use a key of your own to monitor more.`
    : `This key's plan monitors at most ${limit.max.toLocaleString('en')} VAT numbers; delete monitors or use a plan with more.`;
}

/** Creating monitors, one with its first check at once, or many queued for the scheduler. */
export function createMonitorCreation(
  deps: MonitorsDeps,
  checks: Pick<MonitorChecks, 'ask' | 'apply'>,
  ownerOf: (principal: ApiKeyPrincipal) => Owner,
) {
  const { db, repository, validation, clock, ids, workerId } = deps;
  const { ask, apply } = checks;

  function newRow(
    principal: ApiKeyPrincipal,
    input: MonitorInput,
    normalised: string,
    country: string,
    address: string | null,
  ) {
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
      visitor: visitorOf(principal, address),
      peppol: input.peppol === true ? 1 : 0,
      peppol_state: null,
      peppol_checked_at: null,
    };
    return row;
  }

  /** The demo key's monitors of these numbers past their retention make way for new ones. */
  async function clearExpired(owner: Owner, vatNumbers: string[], trx: Kysely<Database>): Promise<void> {
    if (owner.createdAfter !== null)
      await repository.removeCreatedBy(owner.keyId, owner.createdAfter, vatNumbers, trx);
  }

  /**
   * How many more monitors may be created now, and the cap that bounds it: the plan's per key and,
   * for a visitor of the demo key, the per-address one. Read under the key's lock (`lockKey`).
   */
  async function roomFor(
    principal: ApiKeyPrincipal,
    owner: Owner,
    visitor: string | null,
    trx: Kysely<Database>,
  ): Promise<{ room: number; limit: MonitorLimit }> {
    const max = capOf(deps, principal);
    const room = max - (await repository.countForKey(owner, trx));
    if (visitor !== null) {
      const left = PLAYGROUND_MONITOR_LIMIT - (await repository.countForVisitor(owner, visitor, trx));
      if (left < room) return { room: left, limit: { scope: 'visitor', max: PLAYGROUND_MONITOR_LIMIT } };
    }
    return { room, limit: { scope: 'key', max } };
  }

  /** A hash of the address of a visitor of the demo key (which caps each visitor's monitors); null for other keys. */
  function visitorOf(principal: ApiKeyPrincipal, address: string | null): string | null {
    return principal.playground ? sha256Hex(`openvat monitor visitor ${address ?? ''}`) : null;
  }

  return {
    /**
     * Starts monitoring a number and checks it at once (a fresh stored answer is used). The key's
     * existing monitor of the same number is returned as it is. `address` is the client's (it
     * counts against the per-address cap of the demo key).
     */
    async create(
      principal: ApiKeyPrincipal,
      input: MonitorInput,
      address: string | null = null,
    ): Promise<CreateOutcome> {
      const parsed = validation.parse(input.vat_number, 'vat_number');
      if (parsed.kind !== 'ok') return parsed;
      const owner = ownerOf(principal);
      const row = newRow(principal, input, parsed.vat.normalised, parsed.vat.country, address);
      // Held under this instance's lease while its first check runs; if the process dies, the
      // lease expires and the scheduler makes the first check instead.
      row.locked_until = new Date(clock.millis() + deps.leaseMs).toISOString();
      row.claimed_by = workerId;
      // The count and the insert under the key's lock: concurrent creations never pass the cap.
      const settled = await db.kysely.transaction().execute(async (trx): Promise<CreateOutcome | null> => {
        await repository.lockKey(owner.keyId, trx);
        await clearExpired(owner, [row.vat_number], trx);
        const [existing] = await repository.findByNumbers(owner, [row.vat_number], trx);
        if (existing) {
          const other = await repository.findOfKey(owner, existing.id, trx);
          if (other) return { kind: 'existing', monitor: monitorView(other) };
        }
        const { room, limit } = await roomFor(principal, owner, row.visitor, trx);
        if (room <= 0) return { kind: 'limit_reached', ...limit };
        await repository.insertMany([row], trx);
        return null;
      });
      if (settled) return settled;
      const result = await apply(row.id, 'created', await ask(row, 'created', undefined));
      if (!result) throw new Error(`monitor ${row.id} lost its first check`);
      return { kind: 'created', result };
    },

    /**
     * Starts monitoring many numbers at once; each is checked soon after by the scheduler. Bad rows
     * (malformed, unsupported, over the plan's cap) are listed with their reasons, the others created.
     */
    async createMany(
      principal: ApiKeyPrincipal,
      inputs: MonitorInput[],
      address: string | null = null,
    ): Promise<BulkResult> {
      const results: BulkRow[] = new Array(inputs.length);
      const visitor = visitorOf(principal, address);
      const fresh = new Map<string, { row: MonitorsTable; positions: number[] }>();
      inputs.forEach((input, i) => {
        const parsed = validation.parse(input.vat_number, 'vat_number');
        if (parsed.kind !== 'ok') {
          results[i] = {
            ok: false,
            vat_number: input.vat_number,
            error: { code: parsed.reason, message: parsed.message },
          };
          return;
        }
        const known = fresh.get(parsed.vat.normalised);
        if (known) known.positions.push(i);
        else
          fresh.set(parsed.vat.normalised, {
            row: newRow(principal, input, parsed.vat.normalised, parsed.vat.country, address),
            positions: [i],
          });
      });
      const numbers = [...fresh.keys()];
      const owner = ownerOf(principal);
      const toInsert: MonitorsTable[] = [];
      // The count and the inserts under the key's lock: concurrent requests never pass the cap.
      const stored = await db.kysely.transaction().execute(async (trx) => {
        await repository.lockKey(owner.keyId, trx);
        await clearExpired(owner, numbers, trx);
        const existing = new Map(
          (await repository.findByNumbers(owner, numbers, trx)).map((r) => [r.vat_number, r.id]),
        );
        let { room, limit } = await roomFor(principal, owner, visitor, trx);
        for (const [number, entry] of fresh) {
          if (existing.has(number)) continue;
          if (room <= 0) {
            for (const i of entry.positions)
              results[i] = {
                ok: false,
                vat_number: number,
                error: { code: 'monitor_limit_reached', message: limitMessage(limit) },
              };
            fresh.delete(number);
            continue;
          }
          room -= 1;
          toInsert.push(entry.row);
        }
        await repository.insertMany(toInsert, trx);
        return new Map(
          (await repository.findByNumbers(owner, [...fresh.keys()], trx)).map((r) => [r.vat_number, r.id]),
        );
      });
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
