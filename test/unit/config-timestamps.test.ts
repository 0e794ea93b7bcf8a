import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startTestTsa, type TestTsa } from '../fakes/tsa.js';

const load = (env: Record<string, string>) => loadConfig({ DATABASE_URL: 'sqlite::memory:', ...env });

describe('trusted timestamp settings', () => {
  let tsa: TestTsa;
  let dir: string;
  before(async () => {
    tsa = await startTestTsa('ok');
    dir = mkdtempSync(join(tmpdir(), 'openvat-roots-'));
  });
  after(async () => {
    await tsa.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('are off without OPENVAT_TSA_URLS, hourly by default, and keep the authorities in order', () => {
    assert.deepEqual(load({}).timestamps, {
      urls: [],
      roots: null,
      intervalMs: 3_600_000,
      timeoutMs: 10_000,
    });
    const config = load({
      OPENVAT_TSA_URLS: ' https://freetsa.org/tsr , http://timestamp.digicert.com',
      OPENVAT_TSA_ROOTS: tsa.caFile,
      OPENVAT_TSA_INTERVAL: '15m',
    });
    assert.deepEqual(config.timestamps.urls, ['https://freetsa.org/tsr', 'http://timestamp.digicert.com']);
    assert.equal(config.timestamps.intervalMs, 900_000);
    assert.equal(load({ OPENVAT_TSA_INTERVAL: '90' }).timestamps.intervalMs, 90_000);
    assert.equal(load({ OPENVAT_TSA_INTERVAL: '1d' }).timestamps.intervalMs, 86_400_000);
    assert.equal(load({ OPENVAT_TSA_INTERVAL: '1m' }).timestamps.intervalMs, 60_000);
  });

  it('refuse a URL that is not http(s), naming the setting and the entry', () => {
    for (const value of [
      'ftp://tsa.example/tsr',
      'https://freetsa.org/tsr,tsa.example',
      'file:///etc/passwd',
    ]) {
      assert.throws(
        () => load({ OPENVAT_TSA_URLS: value, OPENVAT_TSA_ROOTS: tsa.caFile }),
        (error: Error) =>
          error instanceof ConfigError && /^OPENVAT_TSA_URLS must list http\(s\) URLs/.test(error.message),
        value,
      );
    }
  });

  it('refuse an interval below one minute, or not a duration, naming the setting', () => {
    for (const value of ['59s', '30', '0', '1 hour', '-5m']) {
      assert.throws(
        () => load({ OPENVAT_TSA_INTERVAL: value }),
        (error: Error) =>
          error instanceof ConfigError && error.message.startsWith('OPENVAT_TSA_INTERVAL must be'),
        value,
      );
    }
  });

  it('read every certificate of OPENVAT_TSA_ROOTS, in file order', () => {
    const both = join(dir, 'both.pem');
    writeFileSync(both, `the authorities' roots\n${tsa.caPem}\n${tsa.pastCaPem}`);
    const roots = load({ OPENVAT_TSA_URLS: tsa.url, OPENVAT_TSA_ROOTS: both }).timestamps.roots;
    assert.equal(roots?.path, both);
    assert.deepEqual(roots?.pems, [tsa.caPem, tsa.pastCaPem]);
    // Roots without authorities: for verifying tokens already stored.
    assert.equal(load({ OPENVAT_TSA_ROOTS: tsa.caFile }).timestamps.roots?.pems.length, 1);
  });

  it('refuse authorities without pinned roots, and a roots file that is missing, unreadable or holds no certificate', () => {
    const empty = join(dir, 'empty.pem');
    writeFileSync(empty, 'no certificate here\n');
    const broken = join(dir, 'broken.pem');
    writeFileSync(broken, `${tsa.caPem}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`);
    const locked = join(dir, 'locked.pem');
    writeFileSync(locked, tsa.caPem);
    chmodSync(locked, 0o000);
    const cases: [Record<string, string>, RegExp][] = [
      [
        { OPENVAT_TSA_URLS: tsa.url },
        /^OPENVAT_TSA_ROOTS is not set: OPENVAT_TSA_URLS needs the root certificates/,
      ],
      [{ OPENVAT_TSA_ROOTS: join(dir, 'missing.pem') }, /^OPENVAT_TSA_ROOTS: no file at \S+missing\.pem$/],
      [{ OPENVAT_TSA_ROOTS: dir }, /^OPENVAT_TSA_ROOTS: \S+ cannot be read \(EISDIR\)$/],
      [{ OPENVAT_TSA_ROOTS: empty }, /^OPENVAT_TSA_ROOTS: \S+empty\.pem holds no certificate \(expected PEM/],
      [
        { OPENVAT_TSA_ROOTS: broken },
        /^OPENVAT_TSA_ROOTS: certificate 2 in \S+broken\.pem is not a valid X\.509 certificate$/,
      ],
    ];
    // Root reads any file: the unreadable case needs another user.
    if (process.getuid?.() !== 0) cases.push([{ OPENVAT_TSA_ROOTS: locked }, /cannot be read \(EACCES\)$/]);
    for (const [env, message] of cases) {
      assert.throws(
        () => load({ OPENVAT_TSA_URLS: tsa.url, ...env }),
        (error: Error) =>
          error instanceof ConfigError && message.test(error.message) && !error.message.includes('\n'),
        JSON.stringify(env),
      );
    }
  });
});
