import type { Kysely } from 'kysely';
import type { ConfirmationChainHeadTable, Database, EvidenceAcknowledgementsTable } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { type HeadSigner, verifyAcknowledgement, verifyHeadSignature } from './anchor.js';
import { type ChainBreak, type ChainReport, createChainVerifier, GENESIS_HASH } from './chain.js';
import type { ConfirmationsRepository } from './repository.js';

/**
 * The evidence guard: the server signs a chain head only when it has verified it against the last
 * signed head it knows. Each instance keeps that head (its anchor) in memory and, before extending
 * the chain, verifies only the links after it: one comparison when the head is the one it wrote,
 * the few links another instance appended otherwise. A head it cannot verify (rewritten, cut back,
 * unsigned, signed with another key) stops confirmations until an operator acknowledges a head
 * (`openvat evidence acknowledge`), which restarts the verification from there.
 */

export type EvidenceProblemReason =
  | ChainBreak
  /** The head carries no signature (it was removed, or the chain was never signed with this key). */
  | 'head_unsigned'
  /** The head's signature is not valid for its `seq` and `hash` with this key. */
  | 'head_signature_invalid'
  /** The head is before the last head this instance verified: links were removed from the end. */
  | 'rolled_back'
  /** A link this instance verified no longer has the hash it had: the chain was rewritten up to it. */
  | 'rewritten';

export interface EvidenceProblem {
  reason: EvidenceProblemReason;
  /** The link where the problem was found. */
  seq: number;
  message: string;
  /** When this instance stopped confirmations. */
  since: string;
}

/** A link known to be part of the verified chain. */
export interface ChainPoint {
  seq: number;
  hash: string;
}

/** Thrown by `beforeAppend`: the chain head cannot be extended. */
export class EvidenceUnverifiedError extends Error {
  override name = 'EvidenceUnverifiedError';
  readonly problem: EvidenceProblem;
  constructor(problem: EvidenceProblem) {
    super(problem.message);
    this.problem = problem;
  }
}

type Found = Omit<EvidenceProblem, 'since'>;

const HEAD_ROW_MISSING: Found = {
  reason: 'head_mismatch',
  seq: 0,
  message: 'the evidence chain head row is missing',
};

/** How many of our own appends, not yet seen committed, are remembered. */
const MAX_PENDING = 1_000;

export function createEvidenceGuard(deps: {
  repository: ConfirmationsRepository;
  signer: HeadSigner | null;
  clock: Clock;
  /** Called once each time confirmations stop. */
  onProblem?: (problem: EvidenceProblem) => void;
  /** Called when an acknowledgement lets confirmations resume. */
  onResume?: (acknowledgement: EvidenceAcknowledgementsTable) => void;
  pageSize?: number;
}) {
  const { repository, signer, clock } = deps;
  const pageSize = deps.pageSize ?? 500;
  /** The last head this instance verified and saw committed; null until the first check. */
  let anchor: ChainPoint | null = null;
  /** Heads this instance wrote in transactions not yet seen committed. */
  let pending: ChainPoint[] = [];
  let problem: EvidenceProblem | null = null;
  /** When this instance first looked at the chain: only acknowledgements made later resume it. */
  let watchingSince: string | null = null;
  const adopted = new Set<string>();

  function signatureProblem(head: ConfirmationChainHeadTable): Found | null {
    if (!signer) return null;
    const seq = Number(head.seq);
    if (seq === 0 && head.hash === GENESIS_HASH) return null;
    if (head.signature === null) {
      return {
        reason: 'head_unsigned',
        seq,
        message: `the evidence chain head (seq ${seq}) carries no signature: it was removed, or the chain was never signed with this key`,
      };
    }
    if (!verifyHeadSignature(signer.publicKey, seq, head.hash, head.signature)) {
      return {
        reason: 'head_signature_invalid',
        seq,
        message: `the evidence chain head (seq ${seq}) does not carry a valid signature by the evidence key: the chain was changed, or signed with another key`,
      };
    }
    return null;
  }

  function fromReport(report: Extract<ChainReport, { ok: false }>): Found {
    return {
      reason: report.reason,
      seq: report.seq,
      message: `the evidence chain does not verify: ${report.message}`,
    };
  }

  /** Verifies the links after `from` up to `head` (hashes, links, and that `from` is unchanged). */
  async function walk(from: ChainPoint, head: ConfirmationChainHeadTable, db: Kysely<Database> | undefined) {
    const headSeq = Number(head.seq);
    if (from.seq > 0 && (await repository.hashAt(from.seq, db)) !== from.hash) {
      return {
        reason: 'rewritten',
        seq: from.seq,
        message: `confirmation seq ${from.seq} is no longer the link of the last verified signed head: the chain was rewritten up to it`,
      } satisfies Found;
    }
    const verifier = createChainVerifier(from);
    let after = from.seq;
    for (;;) {
      const rows = await repository.page(after, pageSize, db, headSeq);
      for (const row of rows) {
        if (!verifier.add(row)) {
          const report = verifier.finish(head);
          return report.ok ? null : fromReport(report);
        }
      }
      if (rows.length < pageSize) break;
      after = Number(rows[rows.length - 1]?.seq ?? after);
    }
    const report = verifier.finish(head);
    return report.ok ? null : fromReport(report);
  }

  /** Whether `head` may be extended, verified from `from` (the anchor when the check began). */
  async function examine(
    head: ConfirmationChainHeadTable,
    from: ChainPoint | null,
    db: Kysely<Database> | undefined,
  ): Promise<Found | null> {
    const seq = Number(head.seq);
    if (from && seq === from.seq && head.hash === from.hash) return null;
    if (pending.some((p) => p.seq === seq && p.hash === head.hash && (!from || p.seq > from.seq)))
      return null;
    if (from && seq < from.seq) {
      return {
        reason: 'rolled_back',
        seq,
        message: `the evidence chain head is at seq ${seq}, but this instance verified it up to seq ${from.seq}: confirmations were removed from the end`,
      };
    }
    const unsigned = signatureProblem(head);
    if (unsigned) return unsigned;
    return from ? walk(from, head, db) : null;
  }

  function stop(found: Found): EvidenceProblem {
    if (!problem) {
      problem = { ...found, since: clock.now().toISOString() };
      deps.onProblem?.(problem);
    }
    return problem;
  }

  function advance(head: ConfirmationChainHeadTable) {
    const seq = Number(head.seq);
    if (anchor && seq <= anchor.seq) return;
    anchor = { seq, hash: head.hash };
    pending = pending.filter((p) => p.seq > seq);
  }

  /** Resumes from an acknowledgement made after this instance began watching, if there is one. */
  async function resume(): Promise<boolean> {
    if (!signer || watchingSince === null) return false;
    const ack = await repository.latestAcknowledgement();
    if (!ack || adopted.has(ack.id) || ack.acknowledged_at <= watchingSince) return false;
    const statement = {
      id: ack.id,
      seq: Number(ack.seq),
      hash: ack.hash,
      acknowledged_at: ack.acknowledged_at,
    };
    if (!verifyAcknowledgement(signer.publicKey, statement, ack.signature)) return false;
    adopted.add(ack.id);
    anchor = { seq: statement.seq, hash: statement.hash };
    pending = [];
    problem = null;
    deps.onResume?.(ack);
    return true;
  }

  /** Why confirmations are stopped, or null. */
  function currentProblem(): EvidenceProblem | null {
    return problem;
  }

  /**
   * Checks the committed head: verifies what was appended since the anchor and moves the anchor
   * to it. Stopped, it first looks for a newer acknowledgement. Returns the problem, or null.
   */
  async function check(): Promise<EvidenceProblem | null> {
    if (!signer) return null;
    if (watchingSince === null) watchingSince = clock.now().toISOString();
    if (problem && !(await resume())) return problem;
    const from = anchor;
    const head = await repository.head();
    if (!head) return stop(HEAD_ROW_MISSING);
    const found = await examine(head, from, undefined);
    if (found) return stop(found);
    advance(head);
    return null;
  }

  /**
   * Inside the transaction that appends, with the head it extends (as `claimNextLink` returned it):
   * throws `EvidenceUnverifiedError` unless that head verifies against the anchor.
   */
  async function beforeAppend(trx: Kysely<Database>, head: ConfirmationChainHeadTable): Promise<void> {
    if (!signer) return;
    if (problem) throw new EvidenceUnverifiedError(problem);
    const found = await examine(head, anchor, trx);
    if (found) throw new EvidenceUnverifiedError(stop(found));
  }

  /** Notes a head this instance wrote (adopted as the anchor once seen committed). */
  function appended(seq: number, hash: string): void {
    if (!signer) return;
    pending.push({ seq, hash });
    if (pending.length > MAX_PENDING) pending = pending.slice(-MAX_PENDING);
  }

  /**
   * The start-up and daily check: walks the whole chain from the newest acknowledgement (or the
   * genesis) to the head, requires the head's signature, then the incremental check. Nothing is
   * signed here.
   */
  async function audit(): Promise<
    { ok: true; head: ConfirmationChainHeadTable } | { ok: false; problem: EvidenceProblem }
  > {
    if (!signer) throw new Error('the evidence audit needs the evidence key');
    if (watchingSince === null) watchingSince = clock.now().toISOString();
    if (problem && !(await resume())) return { ok: false, problem };
    const head = await repository.head();
    if (!head) return { ok: false, problem: stop(HEAD_ROW_MISSING) };
    const found = await auditFrom(await acknowledgedStart(signer), head);
    if (found) return { ok: false, problem: stop(found) };
    const incremental = await check();
    if (incremental) return { ok: false, problem: incremental };
    return { ok: true, head };
  }

  /** Where the full walk starts: the newest acknowledgement with a valid signature, else the genesis. */
  async function acknowledgedStart(key: HeadSigner): Promise<ChainPoint> {
    const ack = await repository.latestAcknowledgement();
    const valid =
      ack &&
      verifyAcknowledgement(
        key.publicKey,
        { id: ack.id, seq: Number(ack.seq), hash: ack.hash, acknowledged_at: ack.acknowledged_at },
        ack.signature,
      );
    return valid ? { seq: Number(ack.seq), hash: ack.hash } : { seq: 0, hash: GENESIS_HASH };
  }

  /** The head's signature, then the links from `start` to the head (which may not be before it). */
  async function auditFrom(start: ChainPoint, head: ConfirmationChainHeadTable): Promise<Found | null> {
    const unsigned = signatureProblem(head);
    if (unsigned) return unsigned;
    if (Number(head.seq) < start.seq) {
      return {
        reason: 'rolled_back',
        seq: Number(head.seq),
        message: `the evidence chain head is at seq ${Number(head.seq)}, before the acknowledged head seq ${start.seq}`,
      };
    }
    return walk(start, head, undefined);
  }

  return {
    /** False without an evidence key: nothing is signed, so there is nothing to guard. */
    enabled: signer !== null,
    problem: currentProblem,
    check,
    beforeAppend,
    appended,
    audit,
  };
}

export type EvidenceGuard = ReturnType<typeof createEvidenceGuard>;
