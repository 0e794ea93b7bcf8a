import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';

const load = (env: Record<string, string>) => loadConfig({ DATABASE_URL: 'sqlite::memory:', ...env });

describe('trusted timestamp settings', () => {
  it('are off without OPENVAT_TSA_URLS, hourly by default, and keep the authorities in order', () => {
    assert.deepEqual(load({}).timestamps, { urls: [], intervalMs: 3_600_000, timeoutMs: 10_000 });
    const config = load({
      OPENVAT_TSA_URLS: ' https://freetsa.org/tsr , http://timestamp.digicert.com',
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
        () => load({ OPENVAT_TSA_URLS: value }),
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
});
