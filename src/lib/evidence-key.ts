import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';

/**
 * Reading the Ed25519 keys of the evidence chain's anchor: the private key the configuration holds
 * (`OPENVAT_EVIDENCE_KEY`) and a public key an operator gives. Pure parsing, so the configuration
 * can check the key at start-up without knowing the feature that signs with it.
 */

export class EvidenceKeyError extends Error {
  override name = 'EvidenceKeyError';
}

/**
 * The private key from `OPENVAT_EVIDENCE_KEY`: a PEM private key (`-----BEGIN PRIVATE KEY-----`, as
 * `openssl genpkey -algorithm ed25519` writes it; `\n` escapes accepted for one-line variables) or
 * the same key's DER in base64. Anything but an Ed25519 private key is refused.
 */
export function parseEvidenceKey(raw: string): KeyObject {
  const text = raw.trim().replaceAll('\\n', '\n');
  let key: KeyObject;
  try {
    key = text.startsWith('-----BEGIN')
      ? createPrivateKey({ key: text, format: 'pem' })
      : createPrivateKey({ key: Buffer.from(text, 'base64'), format: 'der', type: 'pkcs8' });
  } catch {
    throw new EvidenceKeyError(
      'OPENVAT_EVIDENCE_KEY is not a private key: give an Ed25519 key in PEM (openssl genpkey -algorithm ed25519) or its PKCS#8 DER in base64',
    );
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new EvidenceKeyError(
      `OPENVAT_EVIDENCE_KEY must be an Ed25519 key, got ${key.asymmetricKeyType ?? 'an unknown key type'}`,
    );
  }
  return key;
}

/** A public key given as PEM (SPKI), as `openvat evidence public-key` prints it. */
export function parsePublicKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem.trim().replaceAll('\\n', '\n'), format: 'pem' });
  } catch {
    throw new EvidenceKeyError('not a PEM public key');
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new EvidenceKeyError('the public key is not an Ed25519 key');
  return key;
}
