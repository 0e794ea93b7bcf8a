import type { EvidenceTimestampsTable } from '../../db/schema.js';
import { headMessage } from '../confirmations/index.js';
import { certificatesFromPem, isSelfSigned } from './trust.js';
import { grantedResponse } from './tsp.js';

/**
 * What `openvat evidence export-token` writes for an auditor who has nothing but OpenSSL: the head
 * bytes that were imprinted, the token (as a `TimeStampResp` for `openssl ts -verify -in`, and
 * bare for `-token_in`), the certificates it carries, the pinned root it chains to (never one of
 * the token's own), and the commands.
 */
export interface TokenExport {
  files: { name: string; content: Buffer | string }[];
  /** The exact commands, run in the directory written. */
  commands: string[];
}

/**
 * `root` is the pinned certificate (PEM) the token was verified to chain to, and `rootsSource`
 * where it was pinned (`OPENVAT_TSA_ROOTS (…)`, `--tsa-roots …`).
 */
export function exportToken(
  row: EvidenceTimestampsTable,
  hash: string,
  pinned: { root: string; source: string },
): TokenExport {
  const seq = Number(row.head_seq);
  const token = Buffer.from(row.token, 'base64');
  const attime = Math.floor(Date.parse(row.gen_time) / 1000);
  // OpenSSL takes only a self-signed certificate as a trust anchor unless told -partial_chain:
  // needed when what was pinned is an authority's issuing CA or its own certificate.
  const [root] = certificatesFromPem(pinned.root);
  const partial = root && !isSelfSigned(root) ? ' -partial_chain' : '';
  const verify = `-data head.bin -CAfile ca.pem -untrusted chain.pem${partial} -attime ${attime}`;
  const commands = [
    `openssl ts -verify -in token.tsr ${verify}`,
    `openssl ts -verify -token_in -in token.tst ${verify}`,
    'openssl ts -reply -in token.tsr -text',
  ];
  const readme = [
    `Trusted time-stamp (RFC 3161) of the openvat evidence chain head seq ${seq}`,
    '',
    `head.bin    the exact bytes time-stamped (SHA-256 imprint): "${headMessage(seq, hash).toString('utf8').replaceAll('\n', '\\n')}"`,
    `token.tsr   the TimeStampResp (status granted) with the token, issued by ${row.tsa_url} at ${row.gen_time}`,
    'token.tst   the same token alone (CMS SignedData over TSTInfo), for -token_in',
    'chain.pem   the certificates the token carries, the signing certificate first',
    `ca.pem      the pinned certificate the token chains to, from ${pinned.source}: never one the token carries`,
    '            (compare it with the root the authority publishes, or the EU trusted list gives, before trusting it)',
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
      { name: 'ca.pem', content: pinned.root },
      { name: 'README.txt', content: readme },
    ],
    commands,
  };
}
