import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/**
 * What the management of accounts and keys hands on after a write: the audit record written in its
 * transaction, and what the instances must forget of their key caches.
 */

/** One admin write, for the audit log: what was done to what, and the fields it changed. */
export interface WriteRecord {
  action: string;
  target_type: 'account' | 'key' | 'admin_key' | 'rate_change';
  target_id: string;
  changes: Record<string, unknown>;
}

/** Records a write inside the transaction that makes it. */
export type RecordWrite = (trx: Kysely<Database>, write: WriteRecord) => Promise<void>;

/** What the instances must forget after a change (see KeysService.forget). */
export interface KeyChange {
  keyIds?: string[];
  accountIds?: string[];
  hashes?: string[];
}
