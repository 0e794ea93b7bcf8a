import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import { contains, startsWith } from '../../db/like.js';
import type { AccountsTable, ApiKeysTable, Database } from '../../db/schema.js';

/** A row of `api_keys` as read back (the schema's table type; it has no generated columns). */
export type ApiKeyRow = Selectable<ApiKeysTable>;

/** Filters of the admin key list; `after` is the cursor (the last id of the previous page). */
export interface KeyListFilter {
  account_id?: string;
  plan?: string;
  mode?: string;
  status?: 'active' | 'expired' | 'revoked';
  prefix?: string;
  after?: string;
  limit: number;
}

export function createKeysRepository(db: Kysely<Database>) {
  return {
    async insertAccount(account: Insertable<AccountsTable>, trx = db) {
      await trx.insertInto('accounts').values(account).execute();
    },

    async accountExists(id: string, trx = db): Promise<boolean> {
      const row = await trx.selectFrom('accounts').select('id').where('id', '=', id).executeTakeFirst();
      return row !== undefined;
    },

    async insertKey(key: Insertable<ApiKeysTable>, trx = db) {
      await trx.insertInto('api_keys').values(key).execute();
    },

    /** The key with this hash, and whether its account is disabled. */
    async findByHash(
      keyHash: string,
      trx = db,
    ): Promise<(ApiKeyRow & { account_disabled: number | string }) | undefined> {
      return trx
        .selectFrom('api_keys')
        .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
        .selectAll('api_keys')
        .select('accounts.disabled as account_disabled')
        .where('api_keys.key_hash', '=', keyHash)
        .executeTakeFirst();
    },

    /** What decides whether work may still be done for a key: revoked, expiry (rolled), account disabled. */
    async findState(id: string, trx = db) {
      return trx
        .selectFrom('api_keys')
        .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
        .select([
          'api_keys.revoked_at',
          'api_keys.expires_at',
          'api_keys.rolled_to',
          'accounts.disabled as account_disabled',
        ])
        .where('api_keys.id', '=', id)
        .executeTakeFirst();
    },

    async findById(id: string, trx = db): Promise<ApiKeyRow | undefined> {
      return trx.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    },

    async list(trx = db): Promise<ApiKeyRow[]> {
      return trx.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id').execute();
    },

    async countKeys(trx = db): Promise<number> {
      const row = await trx
        .selectFrom('api_keys')
        .select((eb) => eb.fn.countAll<string | number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async findAccount(id: string, trx = db): Promise<Selectable<AccountsTable> | undefined> {
      return trx.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** Accounts in id order, one more than `limit` (to tell whether a page follows). */
    async listAccounts(
      filter: { q?: string; external_id?: string; after?: string; limit: number },
      trx = db,
    ): Promise<Selectable<AccountsTable>[]> {
      let query = trx.selectFrom('accounts').selectAll();
      if (filter.q) {
        const like = contains(filter.q.toLowerCase());
        query = query.where((eb) =>
          eb.or([
            eb(eb.fn('lower', ['name']), 'like', like),
            eb(eb.fn('lower', ['external_id']), 'like', like),
          ]),
        );
      }
      if (filter.external_id) query = query.where('external_id', '=', filter.external_id);
      if (filter.after) query = query.where('id', '>', filter.after);
      return query
        .orderBy('id')
        .limit(filter.limit + 1)
        .execute();
    },

    async updateAccount(id: string, columns: Updateable<AccountsTable>, trx = db) {
      await trx.updateTable('accounts').set(columns).where('id', '=', id).execute();
    },

    /** Keys in id order, one more than `limit`. */
    async listKeys(filter: KeyListFilter, now: string, trx = db): Promise<ApiKeyRow[]> {
      let query = trx.selectFrom('api_keys').selectAll();
      if (filter.account_id) query = query.where('account_id', '=', filter.account_id);
      if (filter.plan) query = query.where('plan', '=', filter.plan);
      if (filter.mode) query = query.where('mode', '=', filter.mode);
      if (filter.prefix)
        query = query
          .where('key_prefix', 'like', startsWith(filter.prefix))
          // SQLite's LIKE ignores the case of ASCII letters; a key's letters are not interchangeable.
          .where(sql`substr(key_prefix, 1, ${filter.prefix.length})`, '=', filter.prefix);
      if (filter.status === 'revoked') query = query.where('revoked_at', 'is not', null);
      if (filter.status === 'expired')
        query = query.where('revoked_at', 'is', null).where('expires_at', '<=', now);
      if (filter.status === 'active')
        query = query
          .where('revoked_at', 'is', null)
          .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
      if (filter.after) query = query.where('id', '>', filter.after);
      return query
        .orderBy('id')
        .limit(filter.limit + 1)
        .execute();
    },

    async updateKey(id: string, columns: Updateable<ApiKeysTable>, trx = db) {
      await trx.updateTable('api_keys').set(columns).where('id', '=', id).execute();
    },

    /**
     * Updates a key that has not been rolled (as the caller read it); false when it has been since (a
     * roll committed meanwhile), and nothing changed.
     */
    async updateUnrolledKey(id: string, columns: Updateable<ApiKeysTable>, trx = db): Promise<boolean> {
      const result = await trx
        .updateTable('api_keys')
        .set(columns)
        .where('id', '=', id)
        .where('rolled_to', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /** Requests of each key this UTC month (`YYYY-MM`), and the last day it made one, from the usage counts. */
    async usageOf(
      keyIds: readonly string[],
      month: string,
      trx = db,
    ): Promise<Map<string, { calls: number; lastDay: string | null }>> {
      if (keyIds.length === 0) return new Map();
      const rows = await trx
        .selectFrom('usage_daily')
        .select([
          'key_id',
          (eb) =>
            eb.fn
              .sum<string | number>(
                eb.case().when('day', '>=', `${month}-01`).then(eb.ref('requests')).else(0).end(),
              )
              .as('n'),
          (eb) => eb.fn.max('day').as('last_day'),
        ])
        .where('key_id', 'in', [...keyIds])
        .groupBy('key_id')
        .execute();
      return new Map(rows.map((r) => [r.key_id, { calls: Number(r.n), lastDay: r.last_day ?? null }]));
    },

    async revoke(id: string, at: string, trx = db): Promise<boolean> {
      const result = await trx
        .updateTable('api_keys')
        .set({ revoked_at: at })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
  };
}

export type KeysRepository = ReturnType<typeof createKeysRepository>;
