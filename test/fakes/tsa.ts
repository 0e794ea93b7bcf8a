import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { makePki, openssl, signTstInfo } from './tsa-pki.js';

/**
 * A local RFC 3161 time-stamping authority for tests, built on Debian's `openssl`: a throwaway CA
 * and TSA certificate (extendedKeyUsage critical timeStamping) made with `openssl req`/`x509`, and a
 * small HTTP server answering `application/timestamp-query` by running `openssl ts -reply`.
 *
 * `mode` makes it misbehave the ways real authorities do:
 * - `ok`: a granted token over the query (the CA chain included);
 * - `rejection`: a `TimeStampResp` with status 2 (rejection);
 * - `other-imprint`, `other-nonce`: a granted, validly signed token over another imprint / nonce;
 * - `no-eku`: a token signed (`openssl cms -sign`) by a certificate without the time-stamping usage;
 * - `slow`: never answers (the client's timeout ends it);
 * - `http-500`: an HTTP error.
 * A TSA that is down is `tsaDownUrl()`: nothing listens there.
 *
 * Each TSA has a CA of its own, carried in its tokens. openvat trusts a token only for a pinned
 * root: `env()` gives the settings that pin this one's (`OPENVAT_TSA_URLS` and `OPENVAT_TSA_ROOTS`),
 * `pinRoots` a file with several. A TSA whose root is not pinned is a home-made authority.
 */
export type TsaMode = 'ok' | 'rejection' | 'other-imprint' | 'other-nonce' | 'no-eku' | 'slow' | 'http-500';

export interface TestTsa {
  url: string;
  /**
   * The CA certificate (PEM file path and text): the root to pin (`OPENVAT_TSA_ROOTS`,
   * `--tsa-roots`), and what an auditor gives `openssl ts -verify -CAfile`.
   */
  caFile: string;
  caPem: string;
  /** `OPENVAT_TSA_URLS` naming this TSA and `OPENVAT_TSA_ROOTS` pinning its root. */
  env(): { OPENVAT_TSA_URLS: string; OPENVAT_TSA_ROOTS: string };
  /** The TSA's signing certificate (PEM). */
  tsaPem: string;
  /** The directory with the keys and certificates (removed by `close`). */
  dir: string;
  /** Queries received (DER), in order. */
  queries: Buffer[];
  /** The Authorization header of each query (undefined when absent), in order. */
  authorizations: (string | undefined)[];
  mode: TsaMode;
  /**
   * A token dated `genTime` (in the past) over SHA-256 of `data`, signed by an older TSA
   * certificate of another root (valid 2020-01-01 to 2020-12-31, time-stamping usage): what an
   * authority issued years ago with a certificate that has expired since. Its CMS signature has no
   * ESS signing-certificate attribute, so it is for openvat's own checks, not `openssl ts -verify`.
   */
  pastToken(data: Buffer, genTime: Date, nonce?: Buffer): Promise<Buffer>;
  /** The older root (PEM text and file) of `pastToken`. */
  pastCaPem: string;
  pastCaFile: string;
  close(): Promise<void>;
}

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/** The query with its imprint or nonce changed (so the signed answer is about something else). */
function altered(query: Buffer, what: 'imprint' | 'nonce'): Buffer {
  const request = pkijs.TimeStampReq.fromBER(toArrayBuffer(query));
  if (what === 'imprint') {
    const other = Buffer.from(request.messageImprint.hashedMessage.valueBlock.valueHexView);
    other[0] = (other[0] ?? 0) ^ 0xff;
    request.messageImprint.hashedMessage = new asn1js.OctetString({ valueHex: toArrayBuffer(other) });
  } else {
    request.nonce = new asn1js.Integer({ value: 42 });
  }
  return Buffer.from(request.toSchema().toBER(false));
}

async function reply(dir: string, query: Buffer, n: number): Promise<Buffer> {
  writeFileSync(join(dir, `q${n}.tsq`), query);
  await openssl(['ts', '-reply', '-config', 'tsa.cnf', '-queryfile', `q${n}.tsq`, '-out', `r${n}.tsr`], dir);
  return readFileSync(join(dir, `r${n}.tsr`));
}

/** A granted answer whose token is re-signed by the certificate without the time-stamping usage. */
async function resignedWithoutUsage(dir: string, query: Buffer, n: number): Promise<Buffer> {
  const good = pkijs.TimeStampResp.fromBER(toArrayBuffer(await reply(dir, query, n)));
  const signed = new pkijs.SignedData({ schema: good.timeStampToken?.content });
  const tstInfo = Buffer.from(signed.encapContentInfo.eContent?.getValue() ?? new ArrayBuffer(0));
  const cms = await signTstInfo(dir, tstInfo, String(n), 'plain.pem', 'plain.key', 'ca.pem');
  const token = pkijs.ContentInfo.fromBER(toArrayBuffer(cms));
  const response = new pkijs.TimeStampResp({
    status: new pkijs.PKIStatusInfo({ status: pkijs.PKIStatus.granted }),
    timeStampToken: token,
  });
  return Buffer.from(response.toSchema().toBER(false));
}

function rejection(): Buffer {
  const response = new pkijs.TimeStampResp({
    status: new pkijs.PKIStatusInfo({
      status: pkijs.PKIStatus.rejection,
      statusStrings: [new asn1js.Utf8String({ value: 'request refused by the test TSA' })],
    }),
  });
  return Buffer.from(response.toSchema().toBER(false));
}

/** Starts a test TSA on 127.0.0.1 (a random port). */
export async function startTestTsa(mode: TsaMode = 'ok'): Promise<TestTsa> {
  const dir = mkdtempSync(join(tmpdir(), 'openvat-tsa-'));
  await makePki(dir);
  const queries: Buffer[] = [];
  let count = 0;
  const hanging = new Set<import('node:http').ServerResponse>();
  const tsa: TestTsa = {
    url: '',
    caFile: join(dir, 'ca.pem'),
    caPem: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    tsaPem: readFileSync(join(dir, 'tsa.pem'), 'utf8'),
    dir,
    queries,
    authorizations: [],
    mode,
    env: () => ({ OPENVAT_TSA_URLS: tsa.url, OPENVAT_TSA_ROOTS: tsa.caFile }),
    pastCaPem: readFileSync(join(dir, 'old-ca.pem'), 'utf8'),
    pastCaFile: join(dir, 'old-ca.pem'),
    async pastToken(data, genTime, nonce) {
      const n = `past${++count}`;
      const query = new pkijs.TimeStampReq({
        version: 1,
        messageImprint: new pkijs.MessageImprint({
          hashAlgorithm: new pkijs.AlgorithmIdentifier({
            algorithmId: '2.16.840.1.101.3.4.2.1',
            algorithmParams: new asn1js.Null(),
          }),
          hashedMessage: new asn1js.OctetString({
            valueHex: toArrayBuffer(createHash('sha256').update(data).digest()),
          }),
        }),
        certReq: true,
      });
      const good = pkijs.TimeStampResp.fromBER(
        toArrayBuffer(await reply(dir, Buffer.from(query.toSchema().toBER(false)), count)),
      );
      const signed = new pkijs.SignedData({ schema: good.timeStampToken?.content });
      const info = pkijs.TSTInfo.fromBER(signed.encapContentInfo.eContent?.getValue() ?? new ArrayBuffer(0));
      info.genTime = genTime;
      delete info.tsa;
      if (nonce) info.nonce = new asn1js.Integer({ valueHex: toArrayBuffer(nonce) });
      const tstInfo = Buffer.from(info.toSchema().toBER(false));
      return signTstInfo(dir, tstInfo, n, 'old-tsa.pem', 'old-tsa.key', 'old-ca.pem');
    },
    async close() {
      for (const res of hanging) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const query = Buffer.concat(chunks);
      queries.push(query);
      tsa.authorizations.push(req.headers.authorization);
      const n = ++count;
      if (req.method !== 'POST' || req.headers['content-type'] !== 'application/timestamp-query') {
        res.writeHead(415).end();
        return;
      }
      const answer = async (): Promise<Buffer | null> => {
        switch (tsa.mode) {
          case 'ok':
            return reply(dir, query, n);
          case 'rejection':
            return rejection();
          case 'other-imprint':
            return reply(dir, altered(query, 'imprint'), n);
          case 'other-nonce':
            return reply(dir, altered(query, 'nonce'), n);
          case 'no-eku':
            return resignedWithoutUsage(dir, query, n);
          case 'slow':
            hanging.add(res);
            return null;
          case 'http-500':
            res.writeHead(500).end('internal error');
            return null;
        }
      };
      answer().then(
        (body) => {
          if (body) res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(body);
        },
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tsa.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tsa`;
  return tsa;
}

let pinned = 0;

/**
 * A roots file (in the first TSA's directory, removed with it) holding the roots of `tsas` and any
 * further PEM certificates: what `OPENVAT_TSA_ROOTS` or `--tsa-roots` names.
 */
export function pinRoots(tsas: TestTsa[], extra: string[] = []): string {
  const [first] = tsas;
  if (!first) throw new Error('pinRoots needs a TSA');
  const file = join(first.dir, `roots-${++pinned}.pem`);
  writeFileSync(file, [...tsas.map((t) => t.caPem), ...extra].join(''));
  return file;
}

/** An address where no TSA listens (a port just closed). */
export async function tsaDownUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/tsa`;
}
