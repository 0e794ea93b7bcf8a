import type { Kysely, Selectable, Transaction } from 'kysely';
import type { AccountsTable, Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { IdGenerator } from '../../lib/ids.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import type { KeysRepository } from './repository.js';
import type { KeyChange, RecordWrite } from './writes.js';

/** A stored metadata object (JSON text). */
export const metadataOf = (text: string | null): Record<string, string> =>
  text === null ? {} : (JSON.parse(text) as Record<string, string>);

/** An account as the admin API shows it. */
export interface AccountRecord {
  id: string;
  name: string | null;
  external_id: string | null;
  metadata: Record<string, string>;
  disabled: boolean;
  created_at: string;
  updated_at: string | null;
}

/** The refusal of an account id that no account has. */
function accountNotFound(id: string): Refusal {
  return refusal('not_found', `No account has the id ${id}.`);
}

/** The fields an account patch may change. */
export interface AccountPatch {
  name?: string | null;
  external_id?: string | null;
  metadata?: Record<string, string>;
  disabled?: boolean;
}

function accountRecord(row: Selectable<AccountsTable>): AccountRecord {
  return {
    id: row.id,
    name: row.name,
    external_id: row.external_id,
    metadata: metadataOf(row.metadata),
    disabled: Number(row.disabled) === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * Accounts as operators manage them through the admin API: every write runs in one transaction with
 * its audit record; disabling or enabling one is told to every instance.
 */
export function createAccountManagement(deps: {
  db: Kysely<Database>;
  repository: KeysRepository;
  clock: Clock;
  ids: IdGenerator;
  announce: (change: KeyChange) => Promise<void>;
}) {
  const { db, repository, clock, ids, announce } = deps;

  async function createAccount(
    input: { name: string | null; external_id?: string | null; metadata?: Record<string, string> },
    record: RecordWrite,
  ): Promise<AccountRecord> {
    const now = clock.now().toISOString();
    const id = ids.uuid();
    const row = {
      id,
      name: input.name,
      external_id: input.external_id ?? null,
      metadata: JSON.stringify(input.metadata ?? {}),
      disabled: 0,
      created_at: now,
      updated_at: null,
    };
    await db.transaction().execute(async (trx) => {
      await repository.insertAccount(row, trx);
      await record(trx, {
        action: 'account.create',
        target_type: 'account',
        target_id: id,
        changes: { name: input.name, external_id: row.external_id, metadata: input.metadata ?? {} },
      });
    });
    return accountRecord(row);
  }

  /** Account `id`; refused (`not_found`) when no account has that id. */
  async function getAccount(id: string): Promise<{ kind: 'ok'; account: AccountRecord } | Refusal> {
    const row = await repository.findAccount(id);
    return row ? { kind: 'ok', account: accountRecord(row) } : accountNotFound(id);
  }

  async function listAccounts(filter: { q?: string; external_id?: string; after?: string; limit: number }) {
    const rows = await repository.listAccounts(filter);
    const page = rows.slice(0, filter.limit);
    return {
      data: page.map(accountRecord),
      next: rows.length > filter.limit ? (page.at(-1)?.id ?? null) : null,
    };
  }

  /**
   * The update's transaction: the patch's columns written with the audit record of what changed; the
   * row as it is after (unchanged when nothing changed), undefined when no account has the id.
   */
  async function updateInside(
    trx: Transaction<Database>,
    id: string,
    patch: AccountPatch,
    record: RecordWrite,
  ) {
    const before = await repository.findAccount(id, trx);
    if (!before) return undefined;
    const columns: Partial<Selectable<AccountsTable>> = {};
    const changes: Record<string, { from: unknown; to: unknown }> = {};
    const current = accountRecord(before);
    for (const field of ['name', 'external_id', 'metadata', 'disabled'] as const) {
      if (patch[field] === undefined) continue;
      if (JSON.stringify(current[field]) === JSON.stringify(patch[field])) continue;
      changes[field] = { from: current[field], to: patch[field] };
    }
    if (patch.name !== undefined) columns.name = patch.name;
    if (patch.external_id !== undefined) columns.external_id = patch.external_id;
    if (patch.metadata !== undefined) columns.metadata = JSON.stringify(patch.metadata);
    if (patch.disabled !== undefined) columns.disabled = patch.disabled ? 1 : 0;
    if (Object.keys(changes).length === 0) return before;
    columns.updated_at = clock.now().toISOString();
    await repository.updateAccount(id, columns, trx);
    await record(trx, { action: 'account.update', target_type: 'account', target_id: id, changes });
    return { ...before, ...columns };
  }

  /** Changes account `id`; refused (`not_found`) when no account has that id. */
  async function updateAccount(
    id: string,
    patch: AccountPatch,
    record: RecordWrite,
  ): Promise<{ kind: 'ok'; account: AccountRecord } | Refusal> {
    const updated = await db.transaction().execute((trx) => updateInside(trx, id, patch, record));
    if (!updated) return accountNotFound(id);
    if (patch.disabled !== undefined) await announce({ accountIds: [id] });
    return { kind: 'ok', account: accountRecord(updated) };
  }

  return { createAccount, getAccount, listAccounts, updateAccount };
}
