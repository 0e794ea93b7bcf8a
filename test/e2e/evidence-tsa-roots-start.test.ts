import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestTsa, type TestTsa } from '../fakes/tsa.js';
import { assertOneLine, cli } from '../helpers/evidence-cli.js';

describe('the pinned roots are checked at start, one line naming the setting', { concurrency: 2 }, () => {
  let dir: string;
  let tsa: TestTsa;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'openvat-roots-start-'));
    tsa = await startTestTsa('ok');
    writeFileSync(join(dir, 'empty.pem'), 'the roots go here\n');
  });
  after(async () => {
    await tsa.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const serve = (env: Record<string, string>) =>
    cli(['serve'], {
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_URL: `sqlite:${join(dir, 'openvat.sqlite')}`,
      OPENVAT_TEDB_URL: 'off',
      ...env,
    });

  it('an authority without pinned roots stops serve', () => {
    assertOneLine(
      serve({ OPENVAT_TSA_URLS: tsa.url }),
      /^openvat: OPENVAT_TSA_ROOTS is not set: OPENVAT_TSA_URLS needs the root certificates of its authorities/,
    );
  });

  it('a roots file that is missing, a directory or holds no certificate stops serve', () => {
    for (const [roots, message] of [
      [join(dir, 'missing.pem'), /^openvat: OPENVAT_TSA_ROOTS: no file at \S+missing\.pem$/],
      [dir, /^openvat: OPENVAT_TSA_ROOTS: \S+ cannot be read \(EISDIR\)$/],
      [join(dir, 'empty.pem'), /^openvat: OPENVAT_TSA_ROOTS: \S+empty\.pem holds no certificate/],
    ] as const) {
      assertOneLine(serve({ OPENVAT_TSA_URLS: tsa.url, OPENVAT_TSA_ROOTS: roots }), message);
    }
  });

  it('an auditor’s --tsa-roots file is checked the same way', () => {
    assertOneLine(
      cli(['evidence', 'verify', '--tsa-roots', join(dir, 'empty.pem')], {
        DATABASE_URL: `sqlite:${join(dir, 'openvat.sqlite')}`,
      }),
      /^openvat: --tsa-roots: \S+empty\.pem holds no certificate/,
    );
  });
});
