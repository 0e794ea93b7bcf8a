import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import type { AdminAuditLogTable, AdminKeysTable, Database } from '../../db/schema.js';

export type AdminKeyRow = Selectable<AdminKeysTable>;
export type AuditLogRow = Selectable<AdminAuditLogTable>;

/** Filters of the audit log; `after` is the cursor (entries older than it come next). */
export interface AuditLogFilter {
  actor_id?: string;
  target_id?: string;
  from?: string;
  to?: string;
  before?: string;
  limit: number;
}

export function createAdminRepository(db: Kysely<Database>) {
  return {
    /** Runs `work` in one transaction: an admin key's change and its audit entry commit together. */
    inTransaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
      return db.transaction().execute(work);
    },

    async insertKey(row: Insertable<AdminKeysTable>, trx: Kysely<Database> = db) {
      await trx.insertInto('admin_keys').values(row).execute();
    },

    async findByHash(hash: string): Promise<AdminKeyRow | undefined> {
      return db.selectFrom('admin_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst();
    },

    async list(): Promise<AdminKeyRow[]> {
      return db.selectFrom('admin_keys').selectAll().orderBy('created_at').orderBy('id').execute();
    },

    async count(trx: Kysely<Database> = db): Promise<number> {
      const row = await trx
        .selectFrom('admin_keys')
        .select((eb) => eb.fn.countAll<string | number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async revoke(id: string, at: string, trx: Kysely<Database> = db): Promise<boolean> {
      const result = await trx
        .updateTable('admin_keys')
        .set({ revoked_at: at })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async touch(id: string, at: string) {
      await db.updateTable('admin_keys').set({ last_used_at: at }).where('id', '=', id).execute();
    },

    async insertAudit(
      row: Insertable<AdminAuditLogTable>,
      trx: Transaction<Database> | Kysely<Database> = db,
    ) {
      await trx.insertInto('admin_audit_log').values(row).execute();
    },

    /** Deletes up to `limit` entries written before `before`; returns how many. */
    async deleteAuditBefore(before: string, limit: number): Promise<number> {
      const result = await db
        .deleteFrom('admin_audit_log')
        .where(
          'id',
          'in',
          db.selectFrom('admin_audit_log').select('id').where('created_at', '<', before).limit(limit),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /** Entries newest first, one more than `limit`. */
    async listAudit(filter: AuditLogFilter): Promise<AuditLogRow[]> {
      let query = db.selectFrom('admin_audit_log').selectAll();
      if (filter.actor_id) query = query.where('actor_id', '=', filter.actor_id);
      if (filter.target_id) query = query.where('target_id', '=', filter.target_id);
      if (filter.from) query = query.where('created_at', '>=', filter.from);
      if (filter.to) query = query.where('created_at', '<', filter.to);
      if (filter.before) query = query.where('id', '<', filter.before);
      return query
        .orderBy('id', 'desc')
        .limit(filter.limit + 1)
        .execute();
    },

    /** Requests per account, key, day and operation from `from` to `to` (inclusive days). */
    async usage(filter: { from: string; to: string; account_id?: string; key_id?: string }) {
      let query = db
        .selectFrom('usage_daily')
        .innerJoin('api_keys', 'api_keys.id', 'usage_daily.key_id')
        .select([
          'api_keys.account_id as account_id',
          'usage_daily.key_id as key_id',
          'usage_daily.day as day',
          'usage_daily.operation as operation',
          'usage_daily.requests as requests',
          'usage_daily.errors as errors',
        ])
        .where('usage_daily.day', '>=', filter.from)
        .where('usage_daily.day', '<=', filter.to);
      if (filter.account_id) query = query.where('api_keys.account_id', '=', filter.account_id);
      if (filter.key_id) query = query.where('usage_daily.key_id', '=', filter.key_id);
      const rows = await query
        .orderBy('api_keys.account_id')
        .orderBy('usage_daily.key_id')
        .orderBy('usage_daily.day')
        .orderBy('usage_daily.operation')
        .limit(100_000)
        .execute();
      return rows.map((r) => ({ ...r, requests: Number(r.requests), errors: Number(r.errors) }));
    },
  };
}

export type AdminRepository = ReturnType<typeof createAdminRepository>;
