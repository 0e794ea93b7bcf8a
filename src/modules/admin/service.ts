import type { Kysely } from 'kysely';
import { deleteInBatches } from '../../db/delete-in-batches.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { randomBase62, safeEqual, sha256Hex } from '../../lib/crypto.js';
import type { IdGenerator } from '../../lib/ids.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import type { RecordWrite } from '../keys/index.js';
import type { AdminKeyRow, AdminRepository, AuditLogFilter, AuditLogRow } from './repository.js';

export const ADMIN_ROLES = ['admin', 'read'] as const;
export type AdminRole = (typeof ADMIN_ROLES)[number];

/** `svc_admin_` followed by 32 base62 characters. */
const ADMIN_KEY_RE = /^svc_admin_[0-9A-Za-z]{32}$/;

export function isAdminKey(value: string): boolean {
  return ADMIN_KEY_RE.test(value);
}

/** The operator behind an admin request. */
export interface AdminPrincipal {
  id: string;
  name: string;
  role: AdminRole;
}

/** Who made an admin write, and from where: the audit log's facts besides the write itself. */
export interface Actor extends AdminPrincipal {
  requestId: string | null;
  address: string | null;
}

/**
 * The actor of the admin-key writes the service makes itself as it starts: the first start's key and
 * the one `OPENVAT_ADMIN_KEY` names.
 */
export const START_ACTOR: Actor = Object.freeze({
  id: '00000000-0000-0000-0000-000000000001',
  name: 'openvat (at start)',
  role: 'admin',
  requestId: null,
  address: null,
});

export interface AdminKeySummary {
  id: string;
  name: string;
  role: AdminRole;
  prefix: string;
  created_at: string;
  revoked_at: string | null;
}

export interface AuditLogEntry {
  id: string;
  actor: { id: string; name: string };
  action: string;
  target: { type: string; id: string };
  changes: Record<string, unknown>;
  request_id: string | null;
  client_address: string | null;
  created_at: string;
}

const summary = (row: AdminKeyRow): AdminKeySummary => ({
  id: row.id,
  name: row.name,
  role: row.role as AdminRole,
  prefix: row.key_prefix,
  created_at: row.created_at,
  revoked_at: row.revoked_at,
});

const entry = (row: AuditLogRow): AuditLogEntry => ({
  id: row.id,
  actor: { id: row.actor_id, name: row.actor_name },
  action: row.action,
  target: { type: row.target_type, id: row.target_id },
  changes: JSON.parse(row.changes) as Record<string, unknown>,
  request_id: row.request_id,
  client_address: row.client_address,
  created_at: row.created_at,
});

/**
 * Admin keys (`svc_admin_…`, stored as SHA-256, with a role) and the audit log of admin writes. An
 * admin key is read on every admin request (admin traffic is light), so a revocation applies at once
 * on every instance.
 */
export function createAdminService(deps: {
  repository: AdminRepository;
  clock: Clock;
  ids: IdGenerator;
  /** Days an audit log entry is kept (`OPENVAT_ADMIN_AUDIT_RETENTION_DAYS`, at least 365). */
  auditRetentionDays: number;
  secrets?: () => string;
}) {
  const { repository, clock, ids } = deps;
  const secret = deps.secrets ?? (() => randomBase62(32));

  /** The audit entry of a write by `actor`, for the transaction that makes it. */
  function recorder(actor: Actor): RecordWrite {
    return async (trx, write) => {
      await repository.insertAudit(
        {
          id: ids.uuid(),
          actor_id: actor.id,
          actor_name: actor.name,
          action: write.action,
          target_type: write.target_type,
          target_id: write.target_id,
          changes: JSON.stringify(write.changes),
          request_id: actor.requestId,
          client_address: actor.address,
          created_at: clock.now().toISOString(),
        },
        trx,
      );
    };
  }

  /** Stores an admin key and its `admin_key.create` entry in one transaction. */
  async function insert(
    input: { name: string; role: AdminRole; key: string; source?: string },
    actor: Actor,
    outer?: Kysely<Database>,
  ): Promise<AdminKeySummary> {
    const row: AdminKeyRow = {
      id: ids.uuid(),
      name: input.name,
      role: input.role,
      key_hash: sha256Hex(input.key),
      key_prefix: input.key.slice(0, 14),
      created_at: clock.now().toISOString(),
      revoked_at: null,
      last_used_at: null,
    };
    const write = async (trx: Kysely<Database>) => {
      await repository.insertKey(row, trx);
      await recorder(actor)(trx, {
        action: 'admin_key.create',
        target_type: 'admin_key',
        target_id: row.id,
        changes: {
          name: row.name,
          role: row.role,
          prefix: row.key_prefix,
          ...(input.source ? { source: input.source } : {}),
        },
      });
    };
    await (outer ? write(outer) : repository.inTransaction(write));
    return summary(row);
  }

  return {
    /**
     * Creates an admin key, recorded in the audit log as `actor`'s (the service itself at start when
     * no one else), within `trx` when given; the secret is returned here only.
     */
    async createKey(
      name: string,
      role: AdminRole,
      actor: Actor = START_ACTOR,
      trx?: Kysely<Database>,
    ): Promise<{ key: string; summary: AdminKeySummary }> {
      const key = `svc_admin_${secret()}`;
      return { key, summary: await insert({ name, role, key }, actor, trx) };
    },

    /**
     * Makes `key` an `admin` key unless it is one already (`OPENVAT_ADMIN_KEY` at every start): true
     * when it was added, recorded in the audit log once. A revoked one stays revoked.
     */
    async ensureKey(key: string, name: string): Promise<boolean> {
      if (await repository.findByHash(sha256Hex(key))) return false;
      try {
        await insert({ name, role: 'admin', key, source: 'OPENVAT_ADMIN_KEY' }, START_ACTOR);
        return true;
      } catch (error) {
        // Another instance starting at the same time added it first (its entry is the one kept).
        if (await repository.findByHash(sha256Hex(key))) return false;
        throw error;
      }
    },

    async listKeys(): Promise<AdminKeySummary[]> {
      return (await repository.list()).map(summary);
    },

    async countKeys(trx?: Kysely<Database>): Promise<number> {
      return repository.count(trx);
    },

    /**
     * Revokes an active admin key, recorded in the audit log as `actor`'s (when it was revoked);
     * refused (`not_found`) when no active admin key has the id.
     */
    async revokeKey(id: string, actor: Actor): Promise<{ kind: 'ok'; revokedAt: string } | Refusal> {
      const at = clock.now().toISOString();
      return repository.inTransaction(async (trx) => {
        if (!(await repository.revoke(id, at, trx)))
          return refusal('not_found', `No active admin key has the id ${id}.`);
        await recorder(actor)(trx, {
          action: 'admin_key.revoke',
          target_type: 'admin_key',
          target_id: id,
          changes: { revoked_at: { from: null, to: at } },
        });
        return { kind: 'ok' as const, revokedAt: at };
      });
    },

    /** The operator of a presented admin key; null for anything else, a revoked key included. */
    async authenticate(presented: string): Promise<AdminPrincipal | 'revoked' | null> {
      if (!isAdminKey(presented)) return null;
      const hash = sha256Hex(presented);
      const row = await repository.findByHash(hash);
      if (!row || !safeEqual(row.key_hash, hash)) return null;
      if (row.revoked_at !== null) return 'revoked';
      return { id: row.id, name: row.name, role: row.role as AdminRole };
    },

    /** The recorder of writes by `actor`, for the key management's transactions. */
    recorder,

    async auditLog(filter: AuditLogFilter): Promise<{ data: AuditLogEntry[]; next: string | null }> {
      const rows = await repository.listAudit(filter);
      const page = rows.slice(0, filter.limit);
      return {
        data: page.map(entry),
        next: rows.length > filter.limit ? (page.at(-1)?.id ?? null) : null,
      };
    },

    /**
     * Deletes the audit log's entries older than the retention, in batches; returns how many. The
     * log is otherwise append-only.
     */
    async purgeAuditLog(batchSize = 1_000): Promise<number> {
      const before = new Date(clock.millis() - deps.auditRetentionDays * 86_400_000).toISOString();
      return deleteInBatches(batchSize, () => repository.deleteAuditBefore(before, batchSize));
    },

    /** Requests per account, key, day and operation over a range of UTC days. */
    usage: (filter: { from: string; to: string; account_id?: string; key_id?: string }) =>
      repository.usage(filter),
  };
}

export type AdminService = ReturnType<typeof createAdminService>;
