import { createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { EvidenceKeyError } from '../../lib/evidence-key.js';

export { EvidenceKeyError, parseEvidenceKey, parsePublicKey } from '../../lib/evidence-key.js';

/**
 * Anchoring of the evidence chain. The chain's hashes show that no row was edited in place, but
 * someone able to write the database can re-hash every row after an edit, or delete the tail and
 * move the head back. So every head (seq, hash) is signed with an Ed25519 key kept outside the
 * database (`OPENVAT_EVIDENCE_KEY`): without the key, a rewritten head cannot carry a valid
 * signature; and a head exported by the operator (`openvat evidence export-head`) pins a link that
 * every later verification must still find, which also catches a tail cut back to an older head.
 */

export const HEAD_FORMAT = 'openvat-evidence-head/1';

/** An exported, signed chain head: what `openvat evidence export-head` prints and the log carries daily. */
export interface SignedHead {
  format: typeof HEAD_FORMAT;
  seq: number;
  hash: string;
  /** Ed25519 signature (base64) of `headMessage(seq, hash)`. */
  signature: string;
  /** The public key the signature verifies with (PEM, SPKI). */
  public_key: string;
  /** When it was exported (informational; not signed). */
  exported_at: string;
}

/** The bytes signed for a head. */
export function headMessage(seq: number, hash: string): Buffer {
  return Buffer.from(`${HEAD_FORMAT}\n${seq}\n${hash}`, 'utf8');
}

export function publicKeyPem(key: KeyObject): string {
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  return publicKey.export({ format: 'pem', type: 'spki' }).toString();
}

/** What an operator's acknowledgement of a chain head says (`openvat evidence acknowledge`). */
export interface Acknowledgement {
  id: string;
  seq: number;
  hash: string;
  acknowledged_at: string;
}

export const ACKNOWLEDGEMENT_FORMAT = 'openvat-evidence-ack/1';

/**
 * The bytes signed for an acknowledgement: another format than a head's, so no signed head (they
 * are logged daily) can pass for an acknowledgement, and the time is signed with it.
 */
export function acknowledgementMessage(ack: Acknowledgement): Buffer {
  return Buffer.from(
    `${ACKNOWLEDGEMENT_FORMAT}\n${ack.id}\n${ack.seq}\n${ack.hash}\n${ack.acknowledged_at}`,
    'utf8',
  );
}

export interface HeadSigner {
  sign(seq: number, hash: string): string;
  signAcknowledgement(ack: Acknowledgement): string;
  readonly publicKey: KeyObject;
}

export function createHeadSigner(privateKey: KeyObject): HeadSigner {
  return {
    sign: (seq, hash) => sign(null, headMessage(seq, hash), privateKey).toString('base64'),
    signAcknowledgement: (ack) => sign(null, acknowledgementMessage(ack), privateKey).toString('base64'),
    publicKey: createPublicKey(privateKey),
  };
}

export function verifyAcknowledgement(
  publicKey: KeyObject,
  ack: Acknowledgement,
  signature: string,
): boolean {
  try {
    return verify(null, acknowledgementMessage(ack), publicKey, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}

export function verifyHeadSignature(
  publicKey: KeyObject,
  seq: number,
  hash: string,
  signature: string,
): boolean {
  try {
    return verify(null, headMessage(seq, hash), publicKey, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}

/** Reads an exported head (JSON), checking its shape; throws with a clear message otherwise. */
export function parseSignedHead(text: string): SignedHead {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new EvidenceKeyError('the exported head is not JSON');
  }
  const head = value as Partial<SignedHead>;
  if (
    head?.format !== HEAD_FORMAT ||
    !Number.isInteger(head.seq) ||
    typeof head.hash !== 'string' ||
    !/^[0-9a-f]{64}$/.test(head.hash) ||
    typeof head.signature !== 'string' ||
    typeof head.public_key !== 'string'
  ) {
    throw new EvidenceKeyError(`the exported head is not a ${HEAD_FORMAT} document`);
  }
  return head as SignedHead;
}
