import type { EvidenceTimestampsTable } from '../../db/schema.js';
import { headMessage } from '../confirmations/index.js';
import type { EvidenceTimestampsRepository } from './repository.js';
import type { TrustedRoots } from './trust.js';
import { checkToken, MAX_SKEW_MS, type TokenFacts } from './tsp.js';

/**
 * Offline verification of the stored time-stamp tokens against a chain already verified up to
 * `headSeq`: each token must be a valid RFC 3161 token (signature, the TSA certificate's
 * time-stamping usage and validity, and its path up to a pinned root, all as of the token's own
 * time) over SHA-256 of `headMessage(seq, hash)`, where `hash` is the chain's link `seq` as it is
 * stored now, and dated no earlier than that link was stored.
 */

/** The chain's links as the confirmations repository pages them. */
export interface ChainLinks {
  /** Up to `limit` links after `afterSeq`, in `seq` order. */
  page(afterSeq: number, limit: number): Promise<Array<{ seq: number; hash: string; created_at: string }>>;
}

async function linkAt(chain: ChainLinks, seq: number) {
  const [link] = await chain.page(seq - 1, 1);
  return link && Number(link.seq) === seq ? link : undefined;
}

export type TimestampBreak =
  /** The link the token covers is not the one stored now: the chain was rewritten up to it. */
  | 'timestamp_rewritten'
  /** The token was issued over another head than the one it is stored for. */
  | 'timestamp_moved'
  /** The token covers a link past the end of the chain: links were removed from the end. */
  | 'timestamp_beyond_head'
  /**
   * The token itself does not verify (signature, certificate, a path to a pinned root, time), or
   * it is dated before the link it covers was stored.
   */
  | 'timestamp_invalid';

export type TimestampsReport =
  | {
      ok: true;
      count: number;
      newest: { head_seq: number; gen_time: string; tsa_url: string } | null;
    }
  | { ok: false; count: number; seq: number; reason: TimestampBreak; message: string };

export async function verifyTimestamps(
  tokens: Pick<EvidenceTimestampsRepository, 'page'>,
  chain: ChainLinks,
  headSeq: number,
  roots: TrustedRoots,
  pageSize = 200,
): Promise<TimestampsReport> {
  let count = 0;
  let newest: EvidenceTimestampsTable | null = null;
  let afterSeq = -1;
  let afterId = '';
  for (;;) {
    const rows = await tokens.page(afterSeq, afterId, pageSize);
    for (const row of rows) {
      const checked = await checkStoredToken(row, chain, headSeq, roots);
      if (!checked.ok) return { count, ...checked };
      count++;
      if (!newest || row.gen_time > newest.gen_time) newest = row;
    }
    if (rows.length < pageSize) break;
    const last = rows[rows.length - 1] as EvidenceTimestampsTable;
    afterSeq = Number(last.head_seq);
    afterId = last.id;
  }
  return {
    ok: true,
    count,
    newest: newest
      ? { head_seq: Number(newest.head_seq), gen_time: newest.gen_time, tsa_url: newest.tsa_url }
      : null,
  };
}

export type StoredTokenCheck =
  | { ok: true; hash: string; facts: TokenFacts }
  | { ok: false; seq: number; reason: TimestampBreak; message: string };

/** One stored token against the chain as it is stored now, and against the pinned roots. */
export async function checkStoredToken(
  row: EvidenceTimestampsTable,
  chain: ChainLinks,
  headSeq: number,
  roots: TrustedRoots,
): Promise<StoredTokenCheck> {
  const seq = Number(row.head_seq);
  const token = Buffer.from(row.token, 'base64');
  const what = `the time-stamp token of head seq ${seq} (${row.gen_time}, ${row.tsa_url})`;
  const link = seq <= headSeq ? await linkAt(chain, seq) : undefined;
  if (link === undefined) {
    return {
      ok: false,
      seq,
      reason: 'timestamp_beyond_head',
      message: `${what} covers seq ${seq}, but the chain ends at seq ${headSeq}: confirmations were removed from the end`,
    };
  }
  const options = { roots, extraCertificates: row.chain };
  const checked = await checkToken(token, headMessage(seq, link.hash), options);
  if (checked.ok) {
    const genTime = checked.facts.genTime;
    if (genTime.toISOString() !== row.gen_time) {
      return {
        ok: false,
        seq,
        reason: 'timestamp_invalid',
        message: `${what} says ${genTime.toISOString()}, not the stored time`,
      };
    }
    // Tokens are asked for after a link is stored, and refused when their time is more than the
    // allowed skew from ours: one dated earlier than that was not issued over this link.
    if (genTime.getTime() + MAX_SKEW_MS < Date.parse(link.created_at)) {
      return {
        ok: false,
        seq,
        reason: 'timestamp_invalid',
        message: `${what} is dated before confirmation seq ${seq}, which it covers, was stored (${link.created_at}): no authority can have time-stamped that link then`,
      };
    }
    return { ok: true, hash: link.hash, facts: checked.facts };
  }
  if (checked.problem !== 'imprint') {
    return {
      ok: false,
      seq,
      reason: 'timestamp_invalid',
      message: `${what} does not verify: ${checked.reason}`,
    };
  }
  if (row.head_hash !== link.hash) {
    const stored = await checkToken(token, headMessage(seq, row.head_hash), options);
    if (stored.ok) {
      return {
        ok: false,
        seq,
        reason: 'timestamp_rewritten',
        message: `confirmation seq ${seq} is not the link time-stamped at ${row.gen_time}: the chain was rewritten up to seq ${seq} after it was time-stamped`,
      };
    }
    if (stored.problem !== 'imprint') {
      return {
        ok: false,
        seq,
        reason: 'timestamp_invalid',
        message: `${what} does not verify: ${stored.reason}`,
      };
    }
  }
  return {
    ok: false,
    seq,
    reason: 'timestamp_moved',
    message: `${what} was not issued over head seq ${seq} of this chain: it belongs to another head`,
  };
}
