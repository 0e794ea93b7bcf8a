import type { KeyObject } from 'node:crypto';
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
  const { publicKey, exported } = anchor;
  if (exported && !publicKey) throw new Error('verifying against an exported head needs the public key');
  const verifier = createChainVerifier();
  let exportedHash: string | null = exported?.seq === 0 ? GENESIS_HASH : null;
  let after = 0;
  let report: ChainReport | null = null;
  for (;;) {
    const rows = await repository.page(after, pageSize);
    for (const row of rows) {
      if (!verifier.add(row)) {
        report = verifier.finish(await repository.head());
        break;
      }
      if (exported && Number(row.seq) === exported.seq) exportedHash = row.hash;
    }
    if (report || rows.length < pageSize) break;
    after = Number(rows[rows.length - 1]?.seq ?? after);
  }
  const head = await repository.head();
  report ??= verifier.finish(head);
  if (!report.ok) return report;
  const { count, headSeq, headHash } = report;
  const fail = (seq: number, reason: Extract<AnchoredReport, { ok: false }>['reason'], message: string) =>
    ({ ok: false, count, seq, reason, message }) as AnchoredReport;

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
  return { ...report, signed, exportedSeq: exported?.seq ?? null };
}

export type ExportedHeadResult = { ok: true; head: SignedHead } | { ok: false; report: AnchoredReport };

/**
 * The current chain head, signed with the evidence key, for the operator to keep outside the
 * database. The chain is verified first and a broken one is never signed; a head stored unsigned
 * (no confirmation since the key was set) is signed now.
 */
export async function exportSignedHead(
  repository: Pick<ConfirmationsRepository, 'page' | 'head' | 'signHead'>,
  signer: HeadSigner,
  now: Date,
): Promise<ExportedHeadResult> {
  const report = await verifyEvidenceChain(repository, 500, { publicKey: signer.publicKey });
  if (!report.ok && report.reason !== 'head_unsigned') return { ok: false, report };
  const head = await repository.head();
  if (!head) return { ok: false, report };
  const seq = Number(head.seq);
  let signature = head.signature;
  if (!report.ok || signature === null) {
    signature = signer.sign(seq, head.hash);
    // Stored only if no confirmation was appended meanwhile (that one is signed already).
    await repository.signHead(seq, head.hash, signature);
  }
  return {
    ok: true,
    head: {
      format: HEAD_FORMAT,
      seq,
      hash: head.hash,
      signature,
      public_key: publicKeyPem(signer.publicKey),
      exported_at: now.toISOString(),
    },
  };
}
