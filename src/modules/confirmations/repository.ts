import type { Kysely } from 'kysely';
import type {
  ConfirmationChainHeadTable,
  ConfirmationIdempotencyTable,
  ConfirmationsTable,
  Database,
  EvidenceAcknowledgementsTable,
} from '../../db/schema.js';

export type IdempotencyRow = ConfirmationIdempotencyTable;

export function createConfirmationsRepository(db: Kysely<Database>) {
  return {
    /**
     * Claims the next link of the chain: increments the head's `seq` and returns the new `seq` with
     * the head it extends (the previous link's `seq`, `hash` and the head's stored signature). Being
     * an UPDATE, it is the first write of the transaction, so it serialises appends on both
     * databases (a row lock on PostgreSQL until commit; SQLite's single writer lock). Must run inside
     * the transaction that inserts the row and sets the head's hash.
     */
    async claimNextLink(
      trx: Kysely<Database>,
    ): Promise<{ seq: number; prevHash: string; previous: ConfirmationChainHeadTable }> {
      const row = await trx
        .updateTable('confirmation_chain_head')
        .set((eb) => ({ seq: eb('seq', '+', 1) }))
        .where('id', '=', 1)
        .returning(['seq', 'hash', 'signature'])
        .executeTakeFirstOrThrow();
      const seq = Number(row.seq);
      return {
        seq,
        prevHash: row.hash,
        previous: { id: 1, seq: seq - 1, hash: row.hash, signature: row.signature },
      };
    },

    /** Names the appended link in the head, with its signature (null without an evidence key). */
    async setHeadHash(
      seq: number,
      hash: string,
      signature: string | null,
      trx: Kysely<Database>,
    ): Promise<void> {
      await trx
        .updateTable('confirmation_chain_head')
        .set({ hash, signature })
        .where('id', '=', 1)
        .where('seq', '=', seq)
        .execute();
    },

    async insert(row: ConfirmationsTable, trx: Kysely<Database>): Promise<void> {
      await trx.insertInto('confirmations').values(row).execute();
    },

    /** A confirmation of this account and mode (another account's, or the other mode's, is not read). */
    async findOfAccount(
      accountId: string,
      mode: string,
      id: string,
      trx: Kysely<Database> = db,
    ): Promise<ConfirmationsTable | undefined> {
      return trx
        .selectFrom('confirmations')
        .selectAll()
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .where('mode', '=', mode)
        .executeTakeFirst();
    },

    async head(trx: Kysely<Database> = db): Promise<ConfirmationChainHeadTable | undefined> {
      return trx.selectFrom('confirmation_chain_head').selectAll().where('id', '=', 1).executeTakeFirst();
    },

    /** Stores a signature of the head, provided the head still names `seq` and `hash`; true when it did. */
    async signHead(
      seq: number,
      hash: string,
      signature: string,
      trx: Kysely<Database> = db,
    ): Promise<boolean> {
      const result = await trx
        .updateTable('confirmation_chain_head')
        .set({ signature })
        .where('id', '=', 1)
        .where('seq', '=', seq)
        .where('hash', '=', hash)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Up to `limit` rows with `seq` greater than `afterSeq` (and at most `upToSeq`), in `seq` order. */
    async page(
      afterSeq: number,
      limit: number,
      trx: Kysely<Database> = db,
      upToSeq?: number,
    ): Promise<ConfirmationsTable[]> {
      let query = trx.selectFrom('confirmations').selectAll().where('seq', '>', afterSeq);
      if (upToSeq !== undefined) query = query.where('seq', '<=', upToSeq);
      return query.orderBy('seq').limit(limit).execute();
    },

    /** The stored hash of link `seq`, or undefined when there is no such row. */
    async hashAt(seq: number, trx: Kysely<Database> = db): Promise<string | undefined> {
      const row = await trx
        .selectFrom('confirmations')
        .select('hash')
        .where('seq', '=', seq)
        .executeTakeFirst();
      return row?.hash;
    },

    /** The newest operator acknowledgement of a chain head, if any. */
    async latestAcknowledgement(
      trx: Kysely<Database> = db,
    ): Promise<EvidenceAcknowledgementsTable | undefined> {
      return trx
        .selectFrom('evidence_acknowledgements')
        .selectAll()
        .orderBy('acknowledged_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
    },

    async insertAcknowledgement(
      row: EvidenceAcknowledgementsTable,
      trx: Kysely<Database> = db,
    ): Promise<void> {
      await trx.insertInto('evidence_acknowledgements').values(row).execute();
    },

    async findIdempotency(
      accountId: string,
      key: string,
      trx: Kysely<Database> = db,
    ): Promise<IdempotencyRow | undefined> {
      return trx
        .selectFrom('confirmation_idempotency')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('idempotency_key', '=', key)
        .executeTakeFirst();
    },

    /** Inserts the in-flight row unless the key is taken; true when this call inserted it. */
    async insertIdempotency(row: IdempotencyRow, trx: Kysely<Database> = db): Promise<boolean> {
      const inserted = await trx
        .insertInto('confirmation_idempotency')
        .values(row)
        .onConflict((oc) => oc.columns(['account_id', 'idempotency_key']).doNothing())
        .returning('owner')
        .executeTakeFirst();
      return inserted !== undefined;
    },

    /**
     * Replaces a stale or expired row with a new in-flight one, only if `previousOwner` still holds
     * it (so two requests cannot both take it over); true on success.
     */
    async takeOverIdempotency(
      previousOwner: string,
      row: IdempotencyRow,
      trx: Kysely<Database> = db,
    ): Promise<boolean> {
      const result = await trx
        .updateTable('confirmation_idempotency')
        .set({
          fingerprint: row.fingerprint,
          state: row.state,
          owner: row.owner,
          key_id: row.key_id,
          confirmation_id: null,
          status_code: null,
          response: null,
          created_at: row.created_at,
          locked_at: row.locked_at,
          expires_at: row.expires_at,
        })
        .where('account_id', '=', row.account_id)
        .where('idempotency_key', '=', row.idempotency_key)
        .where('owner', '=', previousOwner)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Stores the response of the owning request; true when `owner` still held the key. */
    async completeIdempotency(
      accountId: string,
      key: string,
      owner: string,
      result: { confirmationId: string; statusCode: number; response: string },
      trx: Kysely<Database>,
    ): Promise<boolean> {
      const updated = await trx
        .updateTable('confirmation_idempotency')
        .set({
          state: 'completed',
          confirmation_id: result.confirmationId,
          status_code: result.statusCode,
          response: result.response,
        })
        .where('account_id', '=', accountId)
        .where('idempotency_key', '=', key)
        .where('owner', '=', owner)
        .where('state', '=', 'in_flight')
        .executeTakeFirst();
      return Number(updated.numUpdatedRows) === 1;
    },

    /** Frees a key held by `owner` that is still in flight (the attempt ended without a stored answer). */
    async releaseIdempotency(accountId: string, key: string, owner: string, trx: Kysely<Database> = db) {
      await trx
        .deleteFrom('confirmation_idempotency')
        .where('account_id', '=', accountId)
        .where('idempotency_key', '=', key)
        .where('owner', '=', owner)
        .where('state', '=', 'in_flight')
        .execute();
    },

    /** Deletes up to `limit` idempotency rows that expired before `now`; returns how many. */
    async deleteExpiredIdempotency(now: string, limit: number, trx: Kysely<Database> = db): Promise<number> {
      const expired = await trx
        .selectFrom('confirmation_idempotency')
        .select(['account_id', 'idempotency_key'])
        .where('expires_at', '<=', now)
        .orderBy('expires_at')
        .limit(limit)
        .execute();
      let deleted = 0;
      for (const row of expired) {
        const result = await trx
          .deleteFrom('confirmation_idempotency')
          .where('account_id', '=', row.account_id)
          .where('idempotency_key', '=', row.idempotency_key)
          .where('expires_at', '<=', now)
          .executeTakeFirst();
        deleted += Number(result.numDeletedRows);
      }
      return deleted;
    },
  };
}

export type ConfirmationsRepository = ReturnType<typeof createConfirmationsRepository>;
