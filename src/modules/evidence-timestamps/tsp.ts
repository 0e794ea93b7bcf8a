import { createHash } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

/**
 * RFC 3161 time-stamp protocol, on PKI.js (ASN.1 and CMS): the request sent to an authority, the
 * checks of its answer before it is stored, and the checks of a stored token (at its own time).
 * Nothing here speaks HTTP or SQL.
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
  const request = new pkijs.TimeStampReq({
    version: 1,
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({
        algorithmId: OID_SHA256,
        algorithmParams: new asn1js.Null(),
      }),
      hashedMessage: new asn1js.OctetString({ valueHex: toArrayBuffer(imprint) }),
    }),
    nonce: new asn1js.Integer({ valueHex: toArrayBuffer(positive(nonce)) }),
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

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
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
  | 'chain';

export type TokenCheck =
  | { ok: true; facts: TokenFacts }
  | { ok: false; problem: TokenProblem; reason: string };

/** How far a fresh token's time may be from ours (the authority's accuracy and clock skew). */
const MAX_SKEW_MS = 10 * 60_000;

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
 * (RFC 3161 2.3), and was valid at the token's time; and that time is within ten minutes of ours
 * (an authority with a wrong clock is refused).
 */
export async function checkResponse(
  answer: Buffer,
  expected: { data: Buffer; nonce: Buffer; now: Date },
): Promise<TokenCheck> {
  let response: pkijs.TimeStampResp;
  try {
    response = pkijs.TimeStampResp.fromBER(toArrayBuffer(answer));
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

function pem(certificate: pkijs.Certificate): string {
  const base64 = Buffer.from(certificate.toSchema().toBER(false)).toString('base64');
  return `-----BEGIN CERTIFICATE-----\n${base64.replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
}

function subjectOf(certificate: pkijs.Certificate): string {
  return certificate.subject.typesAndValues
    .map(
      (tv) =>
        `${tv.type === '2.5.4.3' ? 'CN' : tv.type === '2.5.4.10' ? 'O' : tv.type === '2.5.4.6' ? 'C' : tv.type}=${tv.value.valueBlock.value}`,
    )
    .join(', ');
}

/** Parses PEM certificates (a stored chain). */
export function certificatesFromPem(text: string): pkijs.Certificate[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) =>
    pkijs.Certificate.fromBER(
      toArrayBuffer(Buffer.from(block.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64')),
    ),
  );
}

export function isSelfSigned(certificate: pkijs.Certificate): boolean {
  return certificate.subject.isEqual(certificate.issuer);
}

/**
 * Checks a token by itself: a SignedData over a TSTInfo whose signature verifies with the signer's
 * certificate (carried in the token, or in `extraCertificates`), that certificate has the critical
 * time-stamping usage and was valid at the token's `genTime`; with `verifyChain`, the signer's
 * chain is also built and checked at `genTime` up to a self-signed root among the certificates (a
 * certificate that expired later does not make an old token invalid).
 */
export async function checkToken(
  token: Buffer,
  data: Buffer,
  options: { extraCertificates?: string; verifyChain?: boolean; nonce?: string } = {},
): Promise<TokenCheck> {
  let signedData: pkijs.SignedData;
  let info: pkijs.TSTInfo;
  try {
    const content = pkijs.ContentInfo.fromBER(toArrayBuffer(token));
    if (content.contentType !== pkijs.ContentInfo.SIGNED_DATA)
      return { ok: false, problem: 'format', reason: 'the token is not CMS SignedData' };
    signedData = new pkijs.SignedData({ schema: content.content });
    const encapsulated = signedData.encapContentInfo;
    if (encapsulated.eContentType !== OID_TST_INFO || !encapsulated.eContent) {
      return { ok: false, problem: 'format', reason: 'the token does not carry a TSTInfo' };
    }
    info = pkijs.TSTInfo.fromBER(encapsulated.eContent.getValue());
  } catch (error) {
    return { ok: false, problem: 'format', reason: `the token cannot be read: ${(error as Error).message}` };
  }
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
  const extra = options.extraCertificates ? certificatesFromPem(options.extraCertificates) : [];
  const carried = (signedData.certificates ?? []).filter(
    (c): c is pkijs.Certificate => c instanceof pkijs.Certificate,
  );
  const known = [...carried];
  for (const certificate of extra) {
    if (
      !known.some((k) =>
        Buffer.from(k.toSchema().toBER(false)).equals(Buffer.from(certificate.toSchema().toBER(false))),
      )
    )
      known.push(certificate);
  }
  if (known !== carried) signedData.certificates = known;
  const genTime = info.genTime;
  const roots = known.filter(isSelfSigned);
  let result: pkijs.SignedDataVerifyResult;
  try {
    result = await signedData.verify({
      signer: 0,
      data: toArrayBuffer(data),
      extendedMode: true,
      checkChain: options.verifyChain === true && roots.length > 0,
      trustedCerts: roots,
      checkDate: genTime,
    });
  } catch (error) {
    const failed = error as pkijs.SignedDataVerifyError;
    if (failed.signerCertificateVerified === false) {
      return {
        ok: false,
        problem: 'chain',
        reason: `the TSA certificate and its chain were not valid at the token's time ${genTime.toISOString()}: ${failed.message}`,
      };
    }
    return {
      ok: false,
      problem: 'signature',
      reason: `the token's signature does not verify: ${failed.message ?? String(error)}`,
    };
  }
  if (!result.signatureVerified || !result.signerCertificate) {
    return { ok: false, problem: 'signature', reason: "the token's signature does not verify" };
  }
  const signer = result.signerCertificate;
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
    },
  };
}

/** The imprint of data as a token covers it. */
export function imprintOf(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

/** Wraps a stored token (ContentInfo DER) in a granted `TimeStampResp`, as `openssl ts -verify -in` reads it. */
export function grantedResponse(token: Buffer): Buffer {
  const response = new pkijs.TimeStampResp({
    status: new pkijs.PKIStatusInfo({ status: pkijs.PKIStatus.granted }),
    timeStampToken: pkijs.ContentInfo.fromBER(toArrayBuffer(token)),
  });
  return Buffer.from(response.toSchema().toBER(false));
}
