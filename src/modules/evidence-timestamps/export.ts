import type { EvidenceTimestampsTable } from '../../db/schema.js';
import { headMessage } from '../confirmations/index.js';
import { certificatesFromPem, grantedResponse, isSelfSigned } from './tsp.js';

/**
 * What `openvat evidence export-token` writes for an auditor who has nothing but OpenSSL: the head
 * bytes that were imprinted, the token (as a `TimeStampResp` for `openssl ts -verify -in`, and
 * bare for `-token_in`), the certificates it carries, the root among them, and the commands.
 */
export interface TokenExport {
  files: { name: string; content: Buffer | string }[];
  /** The exact commands, run in the directory written. */
  commands: string[];
}

export function exportToken(row: EvidenceTimestampsTable, hash: string): TokenExport {
  const seq = Number(row.head_seq);
  const token = Buffer.from(row.token, 'base64');
  const attime = Math.floor(Date.parse(row.gen_time) / 1000);
  const roots = certificatesFromPem(row.chain)
    .map((certificate, index) => ({ certificate, index }))
    .filter(({ certificate }) => isSelfSigned(certificate));
  const blocks = row.chain.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g) ?? [];
  const ca = roots.map(({ index }) => blocks[index]).join('');
  const commands = [
    `openssl ts -verify -in token.tsr -data head.bin -CAfile ca.pem -untrusted chain.pem -attime ${attime}`,
    `openssl ts -verify -token_in -in token.tst -data head.bin -CAfile ca.pem -untrusted chain.pem -attime ${attime}`,
    'openssl ts -reply -in token.tsr -text',
  ];
  const readme = [
    `Trusted time-stamp (RFC 3161) of the openvat evidence chain head seq ${seq}`,
    '',
    `head.bin    the exact bytes time-stamped (SHA-256 imprint): "${headMessage(seq, hash).toString('utf8').replaceAll('\n', '\\n')}"`,
    `token.tsr   the TimeStampResp (status granted) with the token, issued by ${row.tsa_url} at ${row.gen_time}`,
    'token.tst   the same token alone (CMS SignedData over TSTInfo), for -token_in',
    'chain.pem   the certificates the token carries, the signing certificate first',
    `ca.pem      ${ca ? 'the root certificate among them' : "empty: the token carries no root; put the authority's published root certificate here"} (compare it with the root the authority publishes before trusting it)`,
    '',
    'Verify with OpenSSL alone, in this directory:',
    '',
    ...commands.map((command) => `  ${command}`),
    '',
    `-attime ${attime} checks the certificates as of the token's own time (${row.gen_time}): a TSA certificate`,
    'that expired later does not make an older token invalid. "Verification: OK" means the authority',
    'signed, at that time, the SHA-256 of head.bin, which names the chain link seq and its hash; every',
    'confirmation up to that link is fixed by the chain of hashes (openvat evidence verify).',
    '',
  ].join('\n');
  return {
    files: [
      { name: 'head.bin', content: headMessage(seq, hash) },
      { name: 'token.tsr', content: grantedResponse(token) },
      { name: 'token.tst', content: token },
      { name: 'chain.pem', content: row.chain },
      { name: 'ca.pem', content: ca },
      { name: 'README.txt', content: readme },
    ],
    commands,
  };
}
