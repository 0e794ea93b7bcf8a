import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { PEPPOL_TEST_TABLE } from '../../src/modules/peppol/test-answers.js';
import { buildTestApp, type TestApp, type TestKey } from '../helpers/app.js';

describe('GET /v1/peppol/{identifier} with a test key', () => {
  let t: TestApp;
  let test: TestKey;
  before(async () => {
    // A DNS server that nothing listens on: a test key must never need it.
    t = await buildTestApp({ PEPPOL_DNS_SERVERS: '127.0.0.1:9', PEPPOL_DNS_TIMEOUT_MS: '50' });
    test = await t.key('free', 'test');
  });
  after(() => t.close());

  const lookup = (identifier: string) =>
    t.app.inject({
      method: 'GET',
      url: `/v1/peppol/${encodeURIComponent(identifier)}`,
      headers: test.headers,
    });

  it('answers the documented table, and every other identifier as not registered', async () => {
    const belgian = (await lookup('BE0999000030')).json();
    assert.equal(belgian.data.reachable, true);
    assert.equal(belgian.data.can_receive_invoices, true);
    assert.deepEqual(
      belgian.data.participants.map((p: { id: string }) => p.id),
      PEPPOL_TEST_TABLE.filter((row) => row.vat === 'BE0999000030').map((row) => row.id),
    );
    assert.equal((await lookup('NO999000002')).json().data.can_receive_invoices, false);
    assert.equal((await lookup('NL999000001B01')).json().data.can_receive_invoices, null);
    const other = (await lookup('DE136695976')).json();
    assert.equal(other.data.reachable, false);
    assert.equal(other.data.participants.length, 2);
    const down = await lookup('ATU99990019');
    assert.equal(down.statusCode, 502);
    assert.equal(down.headers['retry-after'], '30');
  });

  it('refuses what is neither a VAT number nor a participant identifier, in the error envelope', async () => {
    for (const [identifier, reason] of [
      ['DE136695977', 'checksum'],
      ['0208:BE0677424046', 'participant_value'],
      ['1234:abc', 'participant_icd'],
      ['other-scheme::0208:0677424046', 'participant_scheme'],
    ] as const) {
      const res = await lookup(identifier);
      assert.equal(res.statusCode, 400, identifier);
      assert.equal(res.json().error.code, 'invalid_format');
      assert.equal(res.json().error.details.reason, reason, identifier);
    }
  });
});

describe('Peppol settings', () => {
  it('a bad value is a one-line error naming the setting', () => {
    for (const [name, value] of [
      ['PEPPOL_DNS_SERVERS', 'dns.example.com'],
      ['PEPPOL_DNS_SERVERS', '127.0.0.1:99999'],
      ['PEPPOL_SML_ZONE', 'not a zone'],
      ['PEPPOL_ALLOW_PRIVATE_SMP', 'maybe'],
    ]) {
      assert.throws(
        () => loadConfig({ [name as string]: value }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message.includes(name as string) &&
          !error.message.includes('\n'),
        `${name}=${value}`,
      );
    }
    const config = loadConfig({ PEPPOL_DNS_SERVERS: '127.0.0.1:5353,[::1]' });
    assert.deepEqual(config.peppol.dnsServers, [
      { host: '127.0.0.1', port: 5353 },
      { host: '::1', port: 53 },
    ]);
    assert.equal(loadConfig({}).peppol.smlZone, 'participant.sml.prod.tech.peppol.org');
  });
});
