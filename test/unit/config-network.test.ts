import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';

const load = (env: Record<string, string>) => loadConfig({ DATABASE_URL: 'sqlite::memory:', ...env });

describe('network and PostgreSQL settings', () => {
  it('OPENVAT_TRUST_PROXY is off by default and takes addresses, CIDR ranges and range names', () => {
    assert.deepEqual(load({}).trustProxy, []);
    for (const off of ['', 'off', 'none', 'false'])
      assert.deepEqual(load({ OPENVAT_TRUST_PROXY: off }).trustProxy, []);
    assert.deepEqual(
      load({ OPENVAT_TRUST_PROXY: '10.0.0.0/8, 192.168.1.10,fd00::/8, ::1, loopback,uniquelocal' })
        .trustProxy,
      ['10.0.0.0/8', '192.168.1.10', 'fd00::/8', '::1', 'loopback', 'uniquelocal'],
    );
  });

  it('OPENVAT_TRUST_PROXY refuses what is not an address or range, naming the entry', () => {
    for (const [value, entry] of [
      ['10.0.0.0/33', '10.0.0.0/33'],
      ['10.0.0.1,proxy.internal', 'proxy.internal'],
      ['10.1', '10.1'],
      ['10.0.0.0/8,', ''],
      ['localhost', 'localhost'],
    ]) {
      assert.throws(
        () => load({ OPENVAT_TRUST_PROXY: value as string }),
        (error: Error) =>
          error instanceof ConfigError &&
          error.message.startsWith(`OPENVAT_TRUST_PROXY: "${entry}" is not an IP address, a CIDR range`),
        value,
      );
    }
  });

  it('OPENVAT_TRUST_PROXY takes the number of proxies every request passes through (1 to 10)', () => {
    assert.equal(load({ OPENVAT_TRUST_PROXY: '1' }).trustProxy, 1);
    assert.equal(load({ OPENVAT_TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(load({ OPENVAT_TRUST_PROXY: '0' }).trustProxy, []);
    assert.throws(
      () => load({ OPENVAT_TRUST_PROXY: '11' }),
      /^ConfigError: OPENVAT_TRUST_PROXY: a hop count must be between 1 and 10, got 11$/,
    );
  });

  it('OPENVAT_TRUST_PROXY refuses "trust all": any direct client could choose its address', () => {
    for (const value of ['true', '*', 'all']) {
      assert.throws(
        () => load({ OPENVAT_TRUST_PROXY: value }),
        (error: Error) =>
          error instanceof ConfigError &&
          error.message.startsWith(`OPENVAT_TRUST_PROXY must list the proxies' addresses or ranges`) &&
          error.message.includes(`got "${value}"`),
        value,
      );
    }
  });

  it('the PostgreSQL pool size (10) and statement timeout (none) are settings, checked', () => {
    assert.deepEqual(load({}).postgres, { poolSize: 10, statementTimeoutMs: 0 });
    assert.deepEqual(
      load({ OPENVAT_PG_POOL_SIZE: '25', OPENVAT_PG_STATEMENT_TIMEOUT_MS: '30000' }).postgres,
      { poolSize: 25, statementTimeoutMs: 30_000 },
    );
    assert.throws(
      () => load({ OPENVAT_PG_POOL_SIZE: '0' }),
      /^ConfigError: OPENVAT_PG_POOL_SIZE must be between 1 and 1000, got 0$/,
    );
    assert.throws(
      () => load({ OPENVAT_PG_STATEMENT_TIMEOUT_MS: '30s' }),
      /^ConfigError: OPENVAT_PG_STATEMENT_TIMEOUT_MS must be a whole number, got "30s"$/,
    );
  });
});
