import type { Kysely, Selectable } from 'kysely';
import type { ApiKeysTable, Database } from '../../db/schema.js';

/** A row of `api_keys` as read back (the schema's table type; it has no generated columns). */
export type ApiKeyRow = Selectable<ApiKeysTable>;

export function createKeysRepository(db: Kysely<Database>) {
  return {
    async insertAccount(account: { id: string; name: string | null; created_at: string }, trx = db) {
      await trx.insertInto('accounts').values(account).execute();
    },

    async accountExists(id: string, trx = db): Promise<boolean> {
      const row = await trx.selectFrom('accounts').select('id').where('id', '=', id).executeTakeFirst();
      return row !== undefined;
    },

    async insertKey(key: ApiKeyRow, trx = db) {
      await trx.insertInto('api_keys').values(key).execute();
    },

    async findByHash(keyHash: string, trx = db): Promise<ApiKeyRow | undefined> {
      return trx.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
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
