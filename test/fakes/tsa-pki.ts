import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The throwaway certificates of the test TSA (\`openssl req\`, \`x509\`, \`ca\`) and the OpenSSL
 * calls that sign with them. See tsa.ts.
 */
export async function openssl(args: string[], cwd: string): Promise<void> {
  await run('openssl', args, { cwd });
}

const TSA_CONFIG = `
[ tsa ]
default_tsa = tsa_config

[ tsa_config ]
dir = .
serial = ./serial
crypto_device = builtin
signer_cert = ./tsa.pem
certs = ./ca.pem
signer_key = ./tsa.key
signer_digest = sha256
default_policy = 1.3.6.1.4.1.99999.1
other_policies = 1.3.6.1.4.1.99999.2
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = no
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
`;

/** A CA and certificates for a test TSA, in a new directory. */
export async function makePki(dir: string): Promise<void> {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await openssl(
    [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '3650',
      '-subj',
      '/CN=openvat test TSA root',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  writeFileSync(
    join(dir, 'tsa.ext'),
    'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=critical,timeStamping\n',
  );
  writeFileSync(
    join(dir, 'plain.ext'),
    'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n',
  );
  for (const [name, ext] of [
    ['tsa', 'tsa.ext'],
    ['plain', 'plain.ext'],
  ] as const) {
    await openssl(
      [
        'req',
        '-new',
        ...ec,
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.csr`,
        '-subj',
        `/CN=openvat test ${name}`,
      ],
      dir,
    );
    await openssl(
      [
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-out',
        `${name}.pem`,
        '-days',
        '365',
        '-extfile',
        ext,
      ],
      dir,
    );
  }
  writeFileSync(join(dir, 'tsa.cnf'), TSA_CONFIG);
  writeFileSync(join(dir, 'serial'), '01\n');
  // An older hierarchy with explicit dates (\`openssl ca\`): a root from 2019, a TSA certificate of 2020.
  writeFileSync(join(dir, 'old-index.txt'), '');
  writeFileSync(join(dir, 'old-serial'), '1000\n');
  writeFileSync(join(dir, 'old-ca.cnf'), OLD_CA_CONFIG);
  await openssl(
    [
      'req',
      '-new',
      ...ec,
      '-keyout',
      'old-ca.key',
      '-out',
      'old-ca.csr',
      '-subj',
      '/CN=openvat test old root',
    ],
    dir,
  );
  await openssl(
    [
      'ca',
      '-batch',
      '-notext',
      '-config',
      'old-ca.cnf',
      '-selfsign',
      '-keyfile',
      'old-ca.key',
      '-in',
      'old-ca.csr',
      '-out',
      'old-ca.pem',
      '-startdate',
      '20190101000000Z',
      '-enddate',
      '20391231000000Z',
      '-extensions',
      'v3_ca',
    ],
    dir,
  );
  await openssl(
    [
      'req',
      '-new',
      ...ec,
      '-keyout',
      'old-tsa.key',
      '-out',
      'old-tsa.csr',
      '-subj',
      '/CN=openvat test old tsa',
    ],
    dir,
  );
  await openssl(
    [
      'ca',
      '-batch',
      '-notext',
      '-config',
      'old-ca.cnf',
      '-cert',
      'old-ca.pem',
      '-keyfile',
      'old-ca.key',
      '-in',
      'old-tsa.csr',
      '-out',
      'old-tsa.pem',
      '-startdate',
      '20200101000000Z',
      '-enddate',
      '20201231235959Z',
      '-extensions',
      'v3_tsa',
    ],
    dir,
  );
}

const OLD_CA_CONFIG = `
[ ca ]
default_ca = old

[ old ]
database = ./old-index.txt
new_certs_dir = .
serial = ./old-serial
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none

[ any ]
commonName = supplied

[ v3_ca ]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash

[ v3_tsa ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,timeStamping
`;

/** Signs a TSTInfo (DER) as a token with \`openssl cms -sign\`: signer certificate and key, extra certificates. */
export async function signTstInfo(
  dir: string,
  tstInfo: Buffer,
  n: string,
  signer: string,
  key: string,
  certs: string,
) {
  writeFileSync(join(dir, `tst${n}.der`), tstInfo);
  await openssl(
    [
      'cms',
      '-sign',
      '-binary',
      '-nodetach',
      '-in',
      `tst${n}.der`,
      '-econtent_type',
      '1.2.840.113549.1.9.16.1.4',
      '-signer',
      signer,
      '-inkey',
      key,
      '-certfile',
      certs,
      '-md',
      'sha256',
      '-outform',
      'DER',
      '-out',
      `cms${n}.der`,
    ],
    dir,
  );
  return readFileSync(join(dir, `cms${n}.der`));
}
