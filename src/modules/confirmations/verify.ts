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

export type AnchoredReport =
  | (Extract<ChainReport, { ok: true }> & { signed: boolean; exportedSeq: number | null })
  | Extract<ChainReport, { ok: false }>
  | {
      ok: false;
      count: number;
      seq: number;
      reason:
        | 'head_unsigned'
        | 'head_signature_invalid'
        | 'exported_head_invalid'
        | 'exported_head_mismatch'
        | 'rolled_back';
      message: string;
    };

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
  const verifier = createChainVerifier();
  let exportedHash: string | null = exported?.seq === 0 ? GENESIS_HASH : null;
  let after = 0;
  let report: ChainReport | null = null;
  // The head is read first and the walk ends at it: confirmations appended meanwhile are not read.
  const head = await repository.head();
  const upTo = head ? Number(head.seq) : undefined;
  for (;;) {
    const rows = await repository.page(after, pageSize, undefined, upTo);
    for (const row of rows) {
      if (!verifier.add(row)) {
        report = verifier.finish(head);
        break;
      }
      if (exported && Number(row.seq) === exported.seq) exportedHash = row.hash;
    }
    if (report || rows.length < pageSize) break;
    after = Number(rows[rows.length - 1]?.seq ?? after);
  }
  report ??= verifier.finish(head);
  if (!report.ok) return { report, head };
  const { count, headSeq, headHash } = report;
  const fail = (seq: number, reason: Extract<AnchoredReport, { ok: false }>['reason'], message: string) => ({
    report: { ok: false, count, seq, reason, message } as AnchoredReport,
    head,
  });

  if (exported && publicKey) {
    if (publicKeyPem(publicKey).trim() !== exported.public_key.trim()) {
      return fail(
        exported.seq,
        'exported_head_invalid',
        'the exported head was signed with another evidence key',
      );
    }
    if (!verifyHeadSignature(publicKey, exported.seq, exported.hash, exported.signature)) {
      return fail(
        exported.seq,
        'exported_head_invalid',
        'the exported head does not carry a valid signature',
      );
    }
    if (exported.seq > headSeq) {
      return fail(
        headSeq + 1,
        'rolled_back',
        `the chain ends at seq ${headSeq}, but the exported head names seq ${exported.seq}: confirmations were removed from the end`,
      );
    }
    if (exportedHash !== exported.hash) {
      return fail(
        exported.seq,
        'exported_head_mismatch',
        `confirmation seq ${exported.seq} is not the one in the exported head: the chain was rewritten up to it`,
      );
    }
  }
  let signed = false;
  if (publicKey && headSeq > 0) {
    const signature = head?.signature ?? null;
    if (signature === null) {
      return fail(
        headSeq,
        'head_unsigned',
        'the chain head carries no signature (no confirmation was stored since OPENVAT_EVIDENCE_KEY was set, or it was removed); run "openvat evidence export-head" to sign the current head',
      );
    }
    if (!verifyHeadSignature(publicKey, headSeq, headHash, signature)) {
      return fail(
        headSeq,
        'head_signature_invalid',
        'the chain head signature is not valid for this evidence key',
      );
    }
    signed = true;
  }
  return { report: { ...report, signed, exportedSeq: exported?.seq ?? null }, head };
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
