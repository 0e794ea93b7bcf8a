import type * as pkijs from 'pkijs';
import { loadPkijs } from './pki.js';

/**
 * The certificates a time-stamp token is trusted for: the pinned ones (`OPENVAT_TSA_ROOTS`, or an
 * auditor's `--tsa-roots FILE`), and never one the token carries. The token's own certificates
 * only help build the path from its signer up to a pinned one.
 */
export interface TrustedRoots {
  /** Where they come from, as messages name it (`OPENVAT_TSA_ROOTS (/etc/openvat/tsa-roots.pem)`). */
  source: string;
  certificates: pkijs.Certificate[];
}

export function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/** Parses PEM certificates (a stored chain, a roots file). */
export function certificatesFromPem(text: string): pkijs.Certificate[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) =>
    loadPkijs().Certificate.fromBER(
      toArrayBuffer(Buffer.from(block.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64')),
    ),
  );
}

export function trustedRoots(pems: readonly string[], source: string): TrustedRoots {
  return { source, certificates: pems.flatMap((text) => certificatesFromPem(text)) };
}

export function pem(certificate: pkijs.Certificate): string {
  const base64 = Buffer.from(certificate.toSchema().toBER(false)).toString('base64');
  return `-----BEGIN CERTIFICATE-----\n${base64.replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
}

export function der(certificate: pkijs.Certificate): Buffer {
  return Buffer.from(certificate.toSchema().toBER(false));
}

/** The DER of the signed part: the same certificate, whatever bytes its signature has. */
function tbsOf(certificate: pkijs.Certificate): Buffer {
  return Buffer.from(certificate.encodeTBS().toBER(false));
}

/** The pinned certificate that is `certificate`, or undefined. */
function pinnedAs(certificate: pkijs.Certificate, roots: TrustedRoots): pkijs.Certificate | undefined {
  const tbs = tbsOf(certificate);
  return roots.certificates.find((root) => tbsOf(root).equals(tbs));
}

export function isSelfSigned(certificate: pkijs.Certificate): boolean {
  return certificate.subject.isEqual(certificate.issuer);
}

export function subjectOf(certificate: pkijs.Certificate): string {
  return certificate.subject.typesAndValues
    .map(
      (tv) =>
        `${tv.type === '2.5.4.3' ? 'CN' : tv.type === '2.5.4.10' ? 'O' : tv.type === '2.5.4.6' ? 'C' : tv.type}=${tv.value.valueBlock.value}`,
    )
    .join(', ');
}

export type PinnedPath =
  /** `anchor`: the pinned certificate the path ends at (the signer itself when it is pinned). */
  { ok: true; anchor: pkijs.Certificate } | { ok: false; problem: 'untrusted' | 'chain'; reason: string };

/** pkijs' result code of a path to a trusted certificate with one certificate invalid at the date. */
const NOT_VALID_AT_DATE = 8;

/**
 * The path from a token's signer to a pinned certificate, as of `at` (the token's `genTime`):
 * every certificate on it valid then, each issuer a CA. `intermediates` (the token's own
 * certificates and the stored chain) may fill the path; none of them is trusted by itself.
 */
export async function pathToPinned(
  signer: pkijs.Certificate,
  intermediates: readonly pkijs.Certificate[],
  roots: TrustedRoots,
  at: Date,
): Promise<PinnedPath> {
  const who = `the TSA certificate (${subjectOf(signer)})`;
  if (roots.certificates.length === 0)
    return { ok: false, problem: 'untrusted', reason: `no trusted root is pinned in ${roots.source}` };
  const pinned = pinnedAs(signer, roots);
  if (pinned) return { ok: true, anchor: pinned };
  const signerDer = der(signer);
  const { CertificateChainValidationEngine } = loadPkijs();
  const engine = new CertificateChainValidationEngine({
    trustedCerts: roots.certificates,
    // The signer last: the engine takes the last certificate as the one whose path it builds.
    certs: [...intermediates.filter((c) => !der(c).equals(signerDer)), signer],
    checkDate: at,
  });
  const result = await engine.verify({});
  const path = result.certificatePath ?? [];
  const last = path[path.length - 1];
  const anchor = result.result && last ? pinnedAs(last, roots) : undefined;
  if (anchor) return { ok: true, anchor };
  if (result.resultCode === NOT_VALID_AT_DATE) {
    return {
      ok: false,
      problem: 'chain',
      reason: `${who} and its chain up to ${roots.source} were not valid at the token's time ${at.toISOString()}: ${result.resultMessage}`,
    };
  }
  return {
    ok: false,
    problem: 'untrusted',
    reason: `${who} does not chain to a root in ${roots.source} (certificates the token carries are never trusted by themselves)${result.resultMessage ? `: ${result.resultMessage}` : ''}`,
  };
}
