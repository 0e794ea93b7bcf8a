import type { EvidenceTimestampsTable } from '../../db/schema.js';
import { headMessage } from '../confirmations/index.js';
import type { EvidenceTimestampsRepository } from './repository.js';
import { checkToken } from './tsp.js';

/**
 * Offline verification of the stored time-stamp tokens against a chain already verified up to
 * `headSeq`: each token must be a valid RFC 3161 token (signature, the TSA certificate's
 * time-stamping usage and validity, and its chain up to a root the token carries, all as of the
 * token's own time) over SHA-256 of `headMessage(seq, hash)`, where `hash` is the chain's link
 * `seq` as it is stored now.
 */

export type TimestampBreak =
  /** The link the token covers is not the one stored now: the chain was rewritten up to it. */
  | 'timestamp_rewritten'
  /** The token was issued over another head than the one it is stored for. */
  | 'timestamp_moved'
  /** The token covers a link past the end of the chain: links were removed from the end. */
  | 'timestamp_beyond_head'
  /** The token itself does not verify (signature, certificate, time). */
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
  chain: { hashAt(seq: number): Promise<string | undefined> },
  headSeq: number,
  pageSize = 200,
): Promise<TimestampsReport> {
  let count = 0;
  let newest: EvidenceTimestampsTable | null = null;
  let afterSeq = -1;
  let afterId = '';
  for (;;) {
    const rows = await tokens.page(afterSeq, afterId, pageSize);
    for (const row of rows) {
      const failure = await verifyOne(row, chain, headSeq);
      if (failure) return { ok: false, count, ...failure };
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

async function verifyOne(
  row: EvidenceTimestampsTable,
  chain: { hashAt(seq: number): Promise<string | undefined> },
  headSeq: number,
): Promise<{ seq: number; reason: TimestampBreak; message: string } | null> {
  const seq = Number(row.head_seq);
  const token = Buffer.from(row.token, 'base64');
  const what = `the time-stamp token of head seq ${seq} (${row.gen_time}, ${row.tsa_url})`;
  const hash = seq <= headSeq ? await chain.hashAt(seq) : undefined;
  if (hash === undefined) {
    return {
      seq,
      reason: 'timestamp_beyond_head',
      message: `${what} covers seq ${seq}, but the chain ends at seq ${headSeq}: confirmations were removed from the end`,
    };
  }
  const options = { extraCertificates: row.chain, verifyChain: true };
  const checked = await checkToken(token, headMessage(seq, hash), options);
  if (checked.ok) {
    if (checked.facts.genTime.toISOString() !== row.gen_time) {
      return {
        seq,
        reason: 'timestamp_invalid',
        message: `${what} says ${checked.facts.genTime.toISOString()}, not the stored time`,
      };
    }
    return null;
  }
  if (checked.problem !== 'imprint') {
    return { seq, reason: 'timestamp_invalid', message: `${what} does not verify: ${checked.reason}` };
  }
  if (row.head_hash !== hash && (await checkToken(token, headMessage(seq, row.head_hash), options)).ok) {
    return {
      seq,
      reason: 'timestamp_rewritten',
      message: `confirmation seq ${seq} is not the link time-stamped at ${row.gen_time}: the chain was rewritten up to seq ${seq} after it was time-stamped`,
    };
  }
  return {
    seq,
    reason: 'timestamp_moved',
    message: `${what} was not issued over head seq ${seq} of this chain: it belongs to another head`,
  };
}
