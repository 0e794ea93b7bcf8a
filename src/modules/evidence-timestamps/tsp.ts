import { createHash } from 'node:crypto';
import type * as asn1js from 'asn1js';
import type * as pkijs from 'pkijs';
import { loadAsn1js, loadPkijs } from './pki.js';
import {
  certificatesFromPem,
  der,
  pathToPinned,
  pem,
  subjectOf,
  type TrustedRoots,
  toArrayBuffer,
} from './trust.js';

/**
 * RFC 3161 time-stamp protocol, on PKI.js (ASN.1 and CMS): the request sent to an authority, the
 * checks of its answer before it is stored, and the checks of a stored token (at its own time),
 * always against pinned roots (trust.ts). Nothing here speaks HTTP or SQL.
 */

export const OID_SHA256 = '2.16.840.1.101.3.4.2.1';
export const OID_TST_INFO = '1.2.840.113549.1.9.16.1.4';
export const OID_EXT_KEY_USAGE = '2.5.29.37';
export const OID_KP_TIME_STAMPING = '1.3.6.1.5.5.7.3.8';

const HASHES: Record<string, string> = {
  [OID_SHA256]: 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

/** The DER of a `TimeStampReq` over a SHA-256 imprint, with a nonce, asking for the TSA's certificate. */
export function timeStampRequest(imprint: Buffer, nonce: Buffer): Buffer {
  const pki = loadPkijs();
  const asn1 = loadAsn1js();
  const request = new pki.TimeStampReq({
    version: 1,
    messageImprint: new pki.MessageImprint({
      hashAlgorithm: new pki.AlgorithmIdentifier({
        algorithmId: OID_SHA256,
        algorithmParams: new asn1.Null(),
      }),
      hashedMessage: new asn1.OctetString({ valueHex: toArrayBuffer(imprint) }),
    }),
    nonce: new asn1.Integer({ valueHex: toArrayBuffer(positive(nonce)) }),
    certReq: true,
  });
  return Buffer.from(request.toSchema().toBER(false));
}

/** A nonce as a positive INTEGER's content: a leading 0x00 when the high bit is set. */
function positive(bytes: Buffer): Buffer {
  // DER wants the shortest form: no leading zero bytes, but one 0x00 before a high bit.
  const value = stripZeros(bytes);
  return (value[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), value]) : value;
}

function stripZeros(value: Buffer): Buffer {
  let bytes = value;
  while (bytes.length > 1 && bytes[0] === 0) bytes = bytes.subarray(1);
  return bytes;
}

/** An INTEGER's value as unsigned big-endian bytes without leading zeros (for comparing nonces). */
function integerBytes(value: asn1js.Integer): Buffer {
  return stripZeros(Buffer.from(value.valueBlock.valueHexView));
}

/** What a token says, once its signature and signer were checked. */
export interface TokenFacts {
  /** The token: the DER of the CMS ContentInfo (SignedData over TSTInfo). */
  token: Buffer;
  genTime: Date;
  /** TSTInfo serial number, hex. */
  serial: string;
  policy: string;
  /** The hash algorithm and imprint the token covers. */
  hashAlgorithm: string;
  imprint: Buffer;
  /** The nonce, hex, or null when the token carries none. */
  nonce: string | null;
  /** The certificates the token carries (signer first), PEM. */
  chain: string[];
  signerSubject: string;
  /** The pinned certificate (PEM) the signer chains to: the root an auditor gives `-CAfile`. */
  root: string;
}

/** Why a token or answer was refused. */
export type TokenProblem =
  | 'format'
  | 'status'
  | 'imprint'
  | 'nonce'
  | 'signature'
  | 'usage'
  | 'validity'
  | 'chain'
  /** The signer does not chain to a pinned root. */
  | 'untrusted';

export type TokenCheck =
  | { ok: true; facts: TokenFacts }
  | { ok: false; problem: TokenProblem; reason: string };

/** How far a fresh token's time may be from ours (the authority's accuracy and clock skew). */
export const MAX_SKEW_MS = 10 * 60_000;

const STATUS_WORDS = [
  'granted',
  'grantedWithMods',
  'rejection',
  'waiting',
  'revocationWarning',
  'revocationNotification',
];

/**
 * Checks an authority's `TimeStampResp` for our request before anything is stored: status granted
 * (0 or 1), the imprint and nonce are ours, the CMS signature verifies with the certificate the
 * token carries, and that certificate has the time-stamping extended key usage, marked critical
 * (RFC 3161 2.3), was valid at the token's time and chains to a pinned root then; and that time is
 * within ten minutes of ours (an authority with a wrong clock is refused).
 */
export async function checkResponse(
  answer: Buffer,
  expected: { data: Buffer; nonce: Buffer; now: Date; roots: TrustedRoots },
): Promise<TokenCheck> {
  let response: pkijs.TimeStampResp;
  try {
    response = loadPkijs().TimeStampResp.fromBER(toArrayBuffer(answer));
  } catch {
    return { ok: false, problem: 'format', reason: 'the answer is not a DER TimeStampResp' };
  }
  const status = response.status.status;
  if (status !== 0 && status !== 1) {
    const text = response.status.statusStrings?.map((s) => s.valueBlock.value).join('; ');
    return {
      ok: false,
      problem: 'status',
      reason: `the authority answered status ${status} (${STATUS_WORDS[status] ?? 'unknown'})${text ? `: ${text}` : ''}`,
    };
  }
  if (!response.timeStampToken)
    return { ok: false, problem: 'format', reason: 'the answer is granted but carries no token' };
  const token = Buffer.from(response.timeStampToken.toSchema().toBER(false));
  const checked = await checkToken(token, expected.data, {
    roots: expected.roots,
    nonce: stripZeros(expected.nonce).toString('hex'),
  });
  if (!checked.ok) return checked;
  if (checked.facts.chain.length === 0)
    return {
      ok: false,
      problem: 'signature',
      reason: 'the token carries no certificate (certReq was asked)',
    };
  const skew = Math.abs(checked.facts.genTime.getTime() - expected.now.getTime());
  if (skew > MAX_SKEW_MS) {
    return {
      ok: false,
      problem: 'validity',
      reason: `the token's time ${checked.facts.genTime.toISOString()} is not the time of the request (${expected.now.toISOString()})`,
    };
  }
  return checked;
}

/**
 * Checks a token by itself: a SignedData over a TSTInfo whose signature verifies with the signer's
 * certificate (carried in the token, or in `extraCertificates`), that certificate has the critical
 * time-stamping usage and was valid at the token's `genTime`, and its path up to a certificate of
 * `roots` is built and checked at `genTime` (a certificate that expired later does not make an old
 * token invalid). The certificates the token carries, and the extra ones, only fill that path:
 * none is a trust anchor, so a token signed by a home-made authority that brings its own root
 * does not verify.
 */
export async function checkToken(
  token: Buffer,
  data: Buffer,
  options: { roots: TrustedRoots; extraCertificates?: string; nonce?: string },
): Promise<TokenCheck> {
  const read = readToken(token);
  if ('problem' in read) return { ok: false, ...read };
  const { signedData, info } = read;
  const hashAlgorithm =
    HASHES[info.messageImprint.hashAlgorithm.algorithmId] ?? info.messageImprint.hashAlgorithm.algorithmId;
  const imprint = Buffer.from(info.messageImprint.hashedMessage.valueBlock.valueHexView);
  if (hashAlgorithm !== 'sha256' || !imprint.equals(imprintOf(data))) {
    return {
      ok: false,
      problem: 'imprint',
      reason: `the token covers another imprint (${hashAlgorithm}:${imprint.toString('hex')})`,
    };
  }
  const nonce = info.nonce ? integerBytes(info.nonce).toString('hex') : null;
  if (options.nonce !== undefined && nonce !== options.nonce) {
    return { ok: false, problem: 'nonce', reason: `the token carries another nonce (${nonce ?? 'none'})` };
  }
  const known = withExtraCertificates(signedData, options.extraCertificates);
  const genTime = info.genTime;
  const signed = await verifySignature(signedData, data, genTime);
  if (!signed.ok) return signed;
  const signer = signed.signer;
  const usage = signer.extensions?.find((e) => e.extnID === OID_EXT_KEY_USAGE);
  const purposes = (usage?.parsedValue as pkijs.ExtKeyUsage | undefined)?.keyPurposes ?? [];
  if (!usage?.critical || purposes.length !== 1 || purposes[0] !== OID_KP_TIME_STAMPING) {
    return {
      ok: false,
      problem: 'usage',
      reason: `the signing certificate (${subjectOf(signer)}) lacks the critical time-stamping extended key usage`,
    };
  }
  if (genTime < signer.notBefore.value || genTime > signer.notAfter.value) {
    return {
      ok: false,
      problem: 'validity',
      reason: `the signing certificate (${subjectOf(signer)}) was not valid at the token's time ${genTime.toISOString()}`,
    };
  }
  const path = await pathToPinned(signer, known, options.roots, genTime);
  if (!path.ok) return path;
  const chain = [signer, ...known.filter((c) => c !== signer)].map(pem);
  return {
    ok: true,
    facts: {
      token,
      genTime,
      serial: integerBytes(info.serialNumber).toString('hex'),
      policy: info.policy,
      hashAlgorithm,
      imprint,
      nonce,
      chain,
      signerSubject: subjectOf(signer),
      root: pem(path.anchor),
    },
  };
}

/** The SignedData and TSTInfo of a token, or why it cannot be read as one. */
function readToken(
  token: Buffer,
): { signedData: pkijs.SignedData; info: pkijs.TSTInfo } | { problem: 'format'; reason: string } {
  try {
    const pki = loadPkijs();
    const content = pki.ContentInfo.fromBER(toArrayBuffer(token));
    if (content.contentType !== pki.ContentInfo.SIGNED_DATA)
      return { problem: 'format', reason: 'the token is not CMS SignedData' };
    const signedData = new pki.SignedData({ schema: content.content });
    const encapsulated = signedData.encapContentInfo;
    if (encapsulated.eContentType !== OID_TST_INFO || !encapsulated.eContent) {
      return { problem: 'format', reason: 'the token does not carry a TSTInfo' };
    }
    return { signedData, info: pki.TSTInfo.fromBER(encapsulated.eContent.getValue()) };
  } catch (error) {
    return { problem: 'format', reason: `the token cannot be read: ${(error as Error).message}` };
  }
}

/**
 * The certificates the token carries, with the extra ones (a stored chain) added once each: where
 * the signer's certificate is looked up, and what may fill its path to a pinned root.
 */
function withExtraCertificates(signedData: pkijs.SignedData, extra: string | undefined): pkijs.Certificate[] {
  const { Certificate } = loadPkijs();
  const carried = (signedData.certificates ?? []).filter(
    (c): c is pkijs.Certificate => c instanceof Certificate,
  );
  const known = [...carried];
  for (const certificate of extra ? certificatesFromPem(extra) : []) {
    if (!known.some((k) => der(k).equals(der(certificate)))) known.push(certificate);
  }
  if (known.length !== carried.length) signedData.certificates = known;
  return known;
}

/** The CMS signature over the TSTInfo, by the certificate it names (no path is built here). */
async function verifySignature(
  signedData: pkijs.SignedData,
  data: Buffer,
  genTime: Date,
): Promise<{ ok: true; signer: pkijs.Certificate } | { ok: false; problem: 'signature'; reason: string }> {
  let result: pkijs.SignedDataVerifyResult;
  try {
    result = await signedData.verify({
      signer: 0,
      data: toArrayBuffer(data),
      extendedMode: true,
      checkChain: false,
      checkDate: genTime,
    });
  } catch (error) {
    const failed = error as pkijs.SignedDataVerifyError;
    return {
      ok: false,
      problem: 'signature',
      reason: `the token's signature does not verify: ${failed.message ?? String(error)}`,
    };
  }
  if (!result.signatureVerified || !result.signerCertificate) {
    return { ok: false, problem: 'signature', reason: "the token's signature does not verify" };
  }
  return { ok: true, signer: result.signerCertificate };
}

/** The imprint of data as a token covers it. */
export function imprintOf(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

/** Wraps a stored token (ContentInfo DER) in a granted `TimeStampResp`, as `openssl ts -verify -in` reads it. */
export function grantedResponse(token: Buffer): Buffer {
  const pki = loadPkijs();
  const response = new pki.TimeStampResp({
    status: new pki.PKIStatusInfo({ status: pki.PKIStatus.granted }),
    timeStampToken: pki.ContentInfo.fromBER(toArrayBuffer(token)),
  });
  return Buffer.from(response.toSchema().toBER(false));
}
