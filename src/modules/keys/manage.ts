import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { randomBase62, sha256Hex } from '../../lib/crypto.js';
import type { IdGenerator } from '../../lib/ids.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import { createAccountManagement } from './accounts.js';
import { createKeyRecords, type KeyRecord, keyStatus } from './key-records.js';
import { checkSettings, type KeySettings, settingColumns } from './key-settings.js';
import type { Mode, Plan } from './plans.js';
import type { QuotaRepository } from './quota-repository.js';
import type { ApiKeyRow, KeyListFilter, KeysRepository } from './repository.js';
import type { KeyChange, RecordWrite } from './writes.js';

export type { KeyChange, RecordWrite, WriteRecord } from './writes.js';

const MAX_OVERLAP_SECONDS = 7 * 86_400;

/** A roll that found its key rolled by another request when it came to mark it (rolled back). */
class RolledMeanwhile extends Error {}

/** The refusal to roll a key that was rolled already: its successor is the key to roll. */
function rolledAlready(row: Pick<ApiKeyRow, 'id' | 'rolled_to' | 'expires_at'>): Refusal {
  return refusal(
    'invalid_format',
    `Key ${row.id} was rolled already, to ${row.rolled_to} (its overlap ends at ${row.expires_at}); roll that key instead.`,
    { field: 'id' },
  );
}

/** The refusal of a key id that no key has. */
function keyNotFound(id: string): Refusal {
  return refusal('not_found', `No key has the id ${id}.`);
}

/**
 * Whether a patch may set the expiry it gives: a rolled key's expiry is the end of the overlap the
 * roll gave it, which may be brought forward but never cleared or moved later (the old secret would
 * work on beside its successor). `ok` for any other patch.
 */
function checkRolledExpiry(before: ApiKeyRow, columns: Partial<ApiKeyRow>): { kind: 'ok' } | Refusal {
  if (before.rolled_to === null || columns.expires_at === undefined) return { kind: 'ok' };
  const next = columns.expires_at;
  if (next !== null && before.expires_at !== null && next <= before.expires_at) return { kind: 'ok' };
  return refusal(
    'invalid_format',
    `expires_at: key ${before.id} was rolled to ${before.rolled_to}; the end of its overlap (${before.expires_at}) may be brought forward, not ${next === null ? 'cleared' : 'moved later'}.`,
    { field: 'expires_at' },
  );
}

/**
 * Accounts and keys as operators manage them through the admin API: every write runs in one
 * transaction with its audit record, then the instances are told what to forget of their key caches.
 */
export function createKeyManagement(deps: {
  db: Kysely<Database>;
  repository: KeysRepository;
  /** The calls counted against monthly quotas, and the quota of each plan (null = unlimited). */
  quotas: {
    repository: Pick<QuotaRepository, 'counted'>;
    planDefaults: Readonly<Record<Plan, number | null>>;
  };
  clock: Clock;
  ids: IdGenerator;
  /** Tells every instance (this one at once) what to forget. */
  announce: (change: KeyChange) => Promise<void>;
  secrets?: () => string;
}) {
  const { db, repository, quotas, clock, ids, announce } = deps;
  const secret = deps.secrets ?? (() => randomBase62(32));
  const { keyRecord, keyRecords } = createKeyRecords({ repository, quotas, clock });

  async function insertNewKey(
    trx: Transaction<Database>,
    input: { accountId: string; plan: Plan; mode: Mode; columns: Partial<ApiKeyRow>; now: string },
  ) {
    const key = `svc_${input.mode}_${secret()}`;
    const id = ids.uuid();
    const hash = sha256Hex(key);
    await repository.insertKey(
      {
        id,
        account_id: input.accountId,
        key_hash: hash,
        key_prefix: key.slice(0, 13),
        plan: input.plan,
        mode: input.mode,
        default_requester_vat: null,
        created_at: input.now,
        revoked_at: null,
        ...input.columns,
      },
      trx,
    );
    return { id, key, hash };
  }

  /**
   * The roll's transaction: a new key with the old key's settings, counting its monthly quota on the
   * old key's count (a roll does not start the month again), and the old key marked rolled, expiring
   * at the overlap's end. Throws `RolledMeanwhile` (undoing it all) when another roll came first.
   */
  async function rollInside(
    trx: Transaction<Database>,
    id: string,
    overlapSeconds: number,
    now: number,
    record: RecordWrite,
  ): Promise<({ kind: 'ok' } & Awaited<ReturnType<typeof insertNewKey>>) | Refusal> {
    const nowText = new Date(now).toISOString();
    const old = await repository.findById(id, trx);
    if (!old) return keyNotFound(id);
    if (keyStatus(old, now) !== 'active')
      return refusal(
        'invalid_format',
        `Key ${id} is ${keyStatus(old, now)}; only an active key can be rolled.`,
        {
          field: 'id',
        },
      );
    if (old.rolled_to !== null) return rolledAlready(old);
    const {
      id: _id,
      key_hash,
      key_prefix,
      created_at,
      last_used_at,
      revoked_at,
      rolled_to,
      updated_at,
      ...settings
    } = old;
    const made = await insertNewKey(trx, {
      accountId: old.account_id,
      plan: old.plan as Plan,
      mode: old.mode as Mode,
      columns: { ...settings, quota_key_id: old.quota_key_id ?? old.id },
      now: nowText,
    });
    const overlapEnd = new Date(now + overlapSeconds * 1000).toISOString();
    const endsAt = old.expires_at !== null && old.expires_at < overlapEnd ? old.expires_at : overlapEnd;
    const marked = await repository.updateUnrolledKey(
      id,
      { expires_at: endsAt, rolled_to: made.id, updated_at: nowText },
      trx,
    );
    if (!marked) throw new RolledMeanwhile();
    await record(trx, {
      action: 'key.roll',
      target_type: 'key',
      target_id: id,
      changes: {
        rolled_to: { from: null, to: made.id },
        expires_at: { from: old.expires_at, to: endsAt },
        overlap_seconds: overlapSeconds,
      },
    });
    return { kind: 'ok', ...made };
  }

  /**
   * The update's transaction: the patch's columns written with the audit record of what changed; the
   * row as it is after (unchanged when nothing changed).
   */
  async function updateInside(
    trx: Transaction<Database>,
    id: string,
    patch: KeySettings,
    record: RecordWrite,
  ): Promise<{ kind: 'ok'; row: ApiKeyRow } | Refusal> {
    const before = await repository.findById(id, trx);
    if (!before) return keyNotFound(id);
    const columns = settingColumns(patch);
    const held = checkRolledExpiry(before, columns);
    if (held.kind === 'refused') return held;
    const changes: Record<string, { from: unknown; to: unknown }> = {};
    for (const [field, value] of Object.entries(columns)) {
      const old = before[field as keyof ApiKeyRow];
      if (old !== value) changes[field] = { from: old, to: value };
    }
    if (Object.keys(changes).length === 0) return { kind: 'ok', row: before };
    const at = clock.now().toISOString();
    if ('expires_at' in changes && before.rolled_to === null) {
      // A roll that committed since the read above: its overlap's end is not this patch's to move.
      if (!(await repository.updateUnrolledKey(id, { ...columns, updated_at: at }, trx)))
        return refusal('invalid_format', `expires_at: key ${id} was rolled meanwhile; read it again.`, {
          field: 'expires_at',
        });
    } else await repository.updateKey(id, { ...columns, updated_at: at }, trx);
    await record(trx, { action: 'key.update', target_type: 'key', target_id: id, changes });
    return { kind: 'ok', row: { ...before, ...columns, updated_at: at } };
  }

  /** Creates a key of an existing account; the secret is in the answer only. */
  async function createKey(
    input: { account_id: string; plan: Plan; mode: Mode } & KeySettings,
    record: RecordWrite,
  ): Promise<{ kind: 'ok'; key: KeyRecord; secret: string } | Refusal> {
    const checked = checkSettings(input, clock.millis());
    if (checked.kind === 'refused') return checked;
    const now = clock.now().toISOString();
    const created = await db.transaction().execute(async (trx) => {
      if (!(await repository.accountExists(input.account_id, trx))) return null;
      const columns = settingColumns(input);
      const made = await insertNewKey(trx, {
        accountId: input.account_id,
        plan: input.plan,
        mode: input.mode,
        columns,
        now,
      });
      const { account_id, plan, mode, ...settings } = input;
      await record(trx, {
        action: 'key.create',
        target_type: 'key',
        target_id: made.id,
        changes: { account_id, plan, mode, ...settings },
      });
      return made;
    });
    if (!created)
      return refusal('invalid_format', `account_id: no account has the id ${input.account_id}.`, {
        field: 'account_id',
      });
    await announce({ hashes: [created.hash] });
    const row = await repository.findById(created.id);
    if (!row) throw new Error('created key not found');
    return { kind: 'ok', key: await keyRecord(row), secret: created.key };
  }

  /** Key `id`; refused (`not_found`) when no key has that id. */
  async function getKey(id: string): Promise<{ kind: 'ok'; key: KeyRecord } | Refusal> {
    const row = await repository.findById(id);
    return row ? { kind: 'ok', key: await keyRecord(row) } : keyNotFound(id);
  }

  async function listKeys(filter: KeyListFilter) {
    const rows = await repository.listKeys(filter, clock.now().toISOString());
    const page = rows.slice(0, filter.limit);
    return {
      data: await keyRecords(page),
      next: rows.length > filter.limit ? (page.at(-1)?.id ?? null) : null,
    };
  }

  /** Changes the settings of key `id`; refused (`not_found`) when no key has that id. */
  async function updateKey(
    id: string,
    patch: KeySettings,
    record: RecordWrite,
  ): Promise<{ kind: 'ok'; key: KeyRecord } | Refusal> {
    const checked = checkSettings(patch, clock.millis());
    if (checked.kind === 'refused') return checked;
    const updated = await db.transaction().execute((trx) => updateInside(trx, id, patch, record));
    if (updated.kind === 'refused') return updated;
    await announce({ keyIds: [id] });
    return { kind: 'ok', key: await keyRecord(updated.row) };
  }

  /**
   * Revokes key `id` at once (a key revoked already is answered as it is); refused (`not_found`)
   * when no key has that id.
   */
  async function revokeKey(
    id: string,
    record: RecordWrite,
  ): Promise<{ kind: 'ok'; key: KeyRecord } | Refusal> {
    const at = clock.now().toISOString();
    const row = await db.transaction().execute(async (trx) => {
      const before = await repository.findById(id, trx);
      if (!before) return null;
      if (before.revoked_at !== null) return before;
      await repository.revoke(id, at, trx);
      await record(trx, {
        action: 'key.revoke',
        target_type: 'key',
        target_id: id,
        changes: { revoked_at: { from: null, to: at } },
      });
      return { ...before, revoked_at: at };
    });
    if (!row) return keyNotFound(id);
    await announce({ keyIds: [id] });
    return { kind: 'ok', key: await keyRecord(row) };
  }

  /**
   * A new key with the settings of key `id` (and a new secret); the old key keeps working for
   * `overlapSeconds`, then expires. Refused (`not_found`) when no key has that id.
   */
  async function rollKey(
    id: string,
    overlapSeconds: number,
    record: RecordWrite,
  ): Promise<{ kind: 'ok'; key: KeyRecord; secret: string } | Refusal> {
    if (!Number.isInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > MAX_OVERLAP_SECONDS)
      return refusal(
        'invalid_format',
        `overlap_seconds must be a whole number from 0 to ${MAX_OVERLAP_SECONDS} (7 days).`,
        {
          field: 'overlap_seconds',
        },
      );
    const rolled = await db
      .transaction()
      .execute((trx) => rollInside(trx, id, overlapSeconds, clock.millis(), record))
      .catch(async (error: unknown) => {
        if (!(error instanceof RolledMeanwhile)) throw error;
        const current = await repository.findById(id);
        return current ? rolledAlready(current) : keyNotFound(id);
      });
    if (rolled.kind === 'refused') return rolled;
    await announce({ keyIds: [id], hashes: [rolled.hash] });
    const row = await repository.findById(rolled.id);
    if (!row) throw new Error('rolled key not found');
    return { kind: 'ok', key: await keyRecord(row), secret: rolled.key };
  }

  return {
    ...createAccountManagement({ db, repository, clock, ids, announce }),
    createKey,
    getKey,
    listKeys,
    updateKey,
    revokeKey,
    rollKey,
  };
}

export type KeyManagement = ReturnType<typeof createKeyManagement>;
