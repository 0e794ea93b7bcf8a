import type { ConfirmationsTable } from '../../db/schema.js';
import { sha256Hex } from '../../lib/crypto.js';

/**
 * The evidence chain of confirmations. Every stored confirmation carries `seq` (1, 2, 3, … across
 * all accounts), `prev_hash` (the `hash` of the confirmation before it; 64 zeros for the first) and
 * `hash` = SHA-256 (lowercase hex) of `canonicalRecord(row)`. Editing any content field changes the
 * row's hash; deleting a row leaves a gap in `seq` and a `prev_hash` that links to nothing.
 */

export const GENESIS_HASH = '0'.repeat(64);

/** The fields covered by the hash, in the order they are serialised. `hash` itself is not covered. */
export const HASHED_FIELDS = [
  'seq',
  'id',
  'account_id',
  'key_id',
  'request_id',
  'mode',
  'vat_number',
  'requester_vat_number',
  'taxauth_status',
  'valid',
  'qualified',
  'api_request',
  'upstream_url',
  'upstream_request',
  'upstream_response',
  'upstream_http_status',
  'upstream_id',
  'response',
  'created_at',
  'retain_until',
  'prev_hash',
] as const satisfies readonly (keyof ConfirmationsTable)[];

export type HashedRecord = Pick<ConfirmationsTable, (typeof HASHED_FIELDS)[number]>;

/**
 * The canonical serialisation: a JSON array of `[field, value]` pairs in `HASHED_FIELDS` order,
 * without whitespace (`JSON.stringify`). Numbers are integers, text is kept exactly as stored.
 */
export function canonicalRecord(record: HashedRecord): string {
  return JSON.stringify(
    HASHED_FIELDS.map((field) => {
      const value = record[field];
      // PostgreSQL drivers may hand back integer columns as strings; the content is the number.
      if (field === 'seq' || field === 'valid' || field === 'qualified' || field === 'upstream_http_status') {
        return [field, Number(value)];
      }
      return [field, value];
    }),
  );
}

export function hashRecord(record: HashedRecord): string {
  return sha256Hex(canonicalRecord(record));
}

export type ChainBreak =
  /** A row's content no longer matches its hash (edited). */
  | 'hash_mismatch'
  /** A row does not link to the row before it (a row before it was replaced or re-hashed). */
  | 'prev_hash_mismatch'
  /** `seq` skips this number: the row was deleted. */
  | 'missing'
  /** The chain head names a later link than the last row: rows were deleted from the end. */
  | 'missing_tail'
  /** The chain head does not name the last row's hash. */
  | 'head_mismatch';

export type ChainReport =
  | { ok: true; count: number; headSeq: number; headHash: string }
  | { ok: false; count: number; seq: number; reason: ChainBreak; message: string };

/**
 * Walks the chain incrementally: feed rows in `seq` order with `add`, then `finish` with the chain
 * head. Stops at the first break. Starts at the genesis, or after a link already verified (`from`).
 */
export function createChainVerifier(from: { seq: number; hash: string } = { seq: 0, hash: GENESIS_HASH }) {
  let expectedSeq = from.seq + 1;
  let prev = from.hash;
  let count = 0;
  let broken: Extract<ChainReport, { ok: false }> | null = null;

  function fail(seq: number, reason: ChainBreak, message: string) {
    broken = { ok: false, count, seq, reason, message };
  }

  /** False once a break was found (no need to read further). */
  function add(row: HashedRecord & { hash: string }): boolean {
    if (broken) return false;
    const seq = Number(row.seq);
    if (seq !== expectedSeq) {
      fail(expectedSeq, 'missing', `confirmation seq ${expectedSeq} is missing (next stored is ${seq})`);
      return false;
    }
    if (row.prev_hash !== prev) {
      fail(seq, 'prev_hash_mismatch', `confirmation seq ${seq} does not link to seq ${seq - 1}`);
      return false;
    }
    if (hashRecord(row) !== row.hash) {
      fail(seq, 'hash_mismatch', `confirmation seq ${seq} (${row.id}) was changed after it was stored`);
      return false;
    }
    prev = row.hash;
    expectedSeq++;
    count++;
    return true;
  }

  /** The report once every row was added: the first break, or whether the head names the last link. */
  function finish(head: { seq: number; hash: string } | undefined): ChainReport {
    if (broken) return broken;
    const last = expectedSeq - 1;
    if (!head) {
      return {
        ok: false,
        count,
        seq: last,
        reason: 'head_mismatch',
        message: 'the chain head row is missing',
      };
    }
    const headSeq = Number(head.seq);
    if (headSeq > last) {
      return {
        ok: false,
        count,
        seq: expectedSeq,
        reason: 'missing_tail',
        message: `confirmations seq ${expectedSeq} to ${headSeq} are missing`,
      };
    }
    if (headSeq !== last || head.hash !== prev) {
      return {
        ok: false,
        count,
        seq: last,
        reason: 'head_mismatch',
        message: `the chain head (seq ${headSeq}) does not name confirmation seq ${last}`,
      };
    }
    return { ok: true, count, headSeq, headHash: prev };
  }

  return { add, finish };
}
