import type { KeyObject } from 'node:crypto';
import type { ConfirmationChainHeadTable, EvidenceAcknowledgementsTable } from '../../db/schema.js';
import {
  HEAD_FORMAT,
  type HeadSigner,
  publicKeyPem,
  type SignedHead,
  verifyHeadSignature,
} from './anchor.js';
import { type ChainReport, createChainVerifier, GENESIS_HASH } from './chain.js';
import type { ConfirmationsRepository } from './repository.js';

/** What a verification checks beyond the hashes: the head's signature and an exported head. */
export interface AnchorOptions {
  /** The evidence public key: the stored head must carry a valid signature by it. */
  publicKey?: KeyObject | undefined;
  /** A head exported earlier: the chain must still contain it, unchanged. Needs `publicKey`. */
  exported?: SignedHead | undefined;
}

/** Why a chain whose links verify still fails its anchors. */
type AnchorBreak = {
  seq: number;
  reason:
    | 'head_unsigned'
    | 'head_signature_invalid'
    | 'exported_head_invalid'
    | 'exported_head_mismatch'
    | 'rolled_back';
  message: string;
};

export type AnchoredReport =
  | (Extract<ChainReport, { ok: true }> & { signed: boolean; exportedSeq: number | null })
  | Extract<ChainReport, { ok: false }>
  | ({ ok: false; count: number } & AnchorBreak);

/**
 * Walks the whole chain (hashes and links, see `createChainVerifier`), then checks the anchors
 * given: the stored head's signature, and that an exported head is still part of the chain.
 */
export async function verifyEvidenceChain(
  repository: Pick<ConfirmationsRepository, 'page' | 'head'>,
  pageSize = 500,
  anchor: AnchorOptions = {},
): Promise<AnchoredReport> {
  return (await verifyAgainstHead(repository, pageSize, anchor)).report;
}

/** `verifyEvidenceChain`, with the head it verified up to. */
async function verifyAgainstHead(
  repository: Pick<ConfirmationsRepository, 'page' | 'head'>,
  pageSize: number,
  anchor: AnchorOptions,
): Promise<{ report: AnchoredReport; head: ConfirmationChainHeadTable | undefined }> {
  const { publicKey, exported } = anchor;
  if (exported && !publicKey) throw new Error('verifying against an exported head needs the public key');
  // The head is read first and the walk ends at it: confirmations appended meanwhile are not read.
  const head = await repository.head();
  const { report, exportedHash } = await walkChain(repository, pageSize, head, exported);
  if (!report.ok) return { report, head };
  const broken =
    (exported && publicKey ? exportedHeadBreak(publicKey, exported, exportedHash, report.headSeq) : null) ??
    (publicKey ? headSignatureBreak(publicKey, head, report.headSeq, report.headHash) : null);
  if (broken) return { report: { ok: false, count: report.count, ...broken }, head };
  const signed = Boolean(publicKey) && report.headSeq > 0;
  return { report: { ...report, signed, exportedSeq: exported?.seq ?? null }, head };
}

/**
 * Walks the links up to `head`, page by page, stopping at the first break; notes the hash the chain
 * holds at the exported head's seq (the genesis hash for seq 0), null when it has none.
 */
async function walkChain(
  repository: Pick<ConfirmationsRepository, 'page'>,
  pageSize: number,
  head: ConfirmationChainHeadTable | undefined,
  exported: SignedHead | undefined,
): Promise<{ report: ChainReport; exportedHash: string | null }> {
  const verifier = createChainVerifier();
  let exportedHash: string | null = exported?.seq === 0 ? GENESIS_HASH : null;
  const upTo = head ? Number(head.seq) : undefined;
  let after = 0;
  for (;;) {
    const rows = await repository.page(after, pageSize, undefined, upTo);
    for (const row of rows) {
      if (!verifier.add(row)) return { report: verifier.finish(head), exportedHash };
      if (exported && Number(row.seq) === exported.seq) exportedHash = row.hash;
    }
    if (rows.length < pageSize) break;
    after = Number(rows[rows.length - 1]?.seq ?? after);
  }
  return { report: verifier.finish(head), exportedHash };
}

/** An exported head that is not by this key, not validly signed, past the head, or not the chain's link. */
function exportedHeadBreak(
  publicKey: KeyObject,
  exported: SignedHead,
  exportedHash: string | null,
  headSeq: number,
): AnchorBreak | null {
  if (publicKeyPem(publicKey).trim() !== exported.public_key.trim()) {
    return {
      seq: exported.seq,
      reason: 'exported_head_invalid',
      message: 'the exported head was signed with another evidence key',
    };
  }
  if (!verifyHeadSignature(publicKey, exported.seq, exported.hash, exported.signature)) {
    return {
      seq: exported.seq,
      reason: 'exported_head_invalid',
      message: 'the exported head does not carry a valid signature',
    };
  }
  if (exported.seq > headSeq) {
    return {
      seq: headSeq + 1,
      reason: 'rolled_back',
      message: `the chain ends at seq ${headSeq}, but the exported head names seq ${exported.seq}: confirmations were removed from the end`,
    };
  }
  if (exportedHash !== exported.hash) {
    return {
      seq: exported.seq,
      reason: 'exported_head_mismatch',
      message: `confirmation seq ${exported.seq} is not the one in the exported head: the chain was rewritten up to it`,
    };
  }
  return null;
}

/** A stored head past the genesis without a valid signature by the evidence key. */
function headSignatureBreak(
  publicKey: KeyObject,
  head: ConfirmationChainHeadTable | undefined,
  headSeq: number,
  headHash: string,
): AnchorBreak | null {
  if (headSeq <= 0) return null;
  const signature = head?.signature ?? null;
  if (signature === null) {
    return {
      seq: headSeq,
      reason: 'head_unsigned',
      message:
        'the chain head carries no signature (no confirmation was stored since OPENVAT_EVIDENCE_KEY was set, or it was removed); run "openvat evidence export-head" to sign the current head',
    };
  }
  if (!verifyHeadSignature(publicKey, headSeq, headHash, signature)) {
    return {
      seq: headSeq,
      reason: 'head_signature_invalid',
      message: 'the chain head signature is not valid for this evidence key',
    };
  }
  return null;
}

export type ExportedHeadResult = { ok: true; head: SignedHead } | { ok: false; report: AnchoredReport };

/** The exported form of a verified head (its stored signature; the empty chain's is made now). */
export function signedHeadDocument(
  head: ConfirmationChainHeadTable,
  signer: HeadSigner,
  now: Date,
): SignedHead {
  const seq = Number(head.seq);
  const signature = head.signature ?? (seq === 0 ? signer.sign(0, head.hash) : null);
  if (signature === null) throw new Error(`the evidence chain head seq ${seq} is not signed`);
  return {
    format: HEAD_FORMAT,
    seq,
    hash: head.hash,
    signature,
    public_key: publicKeyPem(signer.publicKey),
    exported_at: now.toISOString(),
  };
}

/**
 * The current chain head with its signature, for the operator to keep outside the database. The
 * whole chain is verified first, the head's signature included: nothing is signed here, so a
 * broken chain, and a head left without a valid signature, are never exported (see
 * `acknowledgeHead`).
 */
export async function exportSignedHead(
  repository: Pick<ConfirmationsRepository, 'page' | 'head'>,
  signer: HeadSigner,
  now: Date,
): Promise<ExportedHeadResult> {
  const { report, head } = await verifyAgainstHead(repository, 500, { publicKey: signer.publicKey });
  if (!report.ok || !head) return { ok: false, report };
  return { ok: true, head: signedHeadDocument(head, signer, now) };
}

export type AcknowledgeResult =
  | { ok: true; acknowledgement: EvidenceAcknowledgementsTable; report: AnchoredReport }
  | { ok: false; message: string };

/**
 * The operator's acknowledgement of the current chain head, after a review: records it, signed
 * (with the verification report of that moment and the operator's reason), and signs the head.
 * Instances that stopped confirmations resume from this head. `seq` and `hash` must name the head
 * as it is now, so only the head that was reviewed can be acknowledged.
 */
export async function acknowledgeHead(
  repository: Pick<ConfirmationsRepository, 'page' | 'head' | 'signHead' | 'insertAcknowledgement'>,
  signer: HeadSigner,
  input: { id: string; seq: number; hash: string; reason: string; now: Date },
): Promise<AcknowledgeResult> {
  const head = await repository.head();
  if (!head || Number(head.seq) !== input.seq || head.hash !== input.hash) {
    return {
      ok: false,
      message: head
        ? `the chain head is seq ${Number(head.seq)} (hash ${head.hash}), not the one given: review it again`
        : 'the chain head row is missing',
    };
  }
  const report = await verifyEvidenceChain(repository, 500, { publicKey: signer.publicKey });
  const statement = {
    id: input.id,
    seq: input.seq,
    hash: input.hash,
    acknowledged_at: input.now.toISOString(),
  };
  if (!(await repository.signHead(input.seq, input.hash, signer.sign(input.seq, input.hash)))) {
    return { ok: false, message: 'the chain head changed while it was being acknowledged: review it again' };
  }
  const acknowledgement: EvidenceAcknowledgementsTable = {
    ...statement,
    reason: input.reason,
    report: JSON.stringify(report),
    signature: signer.signAcknowledgement(statement),
  };
  await repository.insertAcknowledgement(acknowledgement);
  return { ok: true, acknowledgement, report };
}
