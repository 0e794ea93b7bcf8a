import assert from 'node:assert/strict';
import { getServers } from 'node:dns';
import { describe, it } from 'node:test';
import { isDnsName, parseDnsServer, systemDnsServers } from '../../../src/registries/dns.js';
import {
  base32,
  SML_ZONES,
  smlLabel,
  smlName,
  smpUrlFromRegexp,
} from '../../../src/registries/peppol-sml.js';

describe('Peppol SML names', () => {
  it('base32 is RFC 4648 without padding, in lower case (the RFC test vectors)', () => {
    const vectors: [string, string][] = [
      ['', ''],
      ['f', 'my'],
      ['fo', 'mzxq'],
      ['foo', 'mzxw6'],
      ['foob', 'mzxw6yq'],
      ['fooba', 'mzxw6ytb'],
      ['foobar', 'mzxw6ytboi'],
    ];
    for (const [input, output] of vectors) assert.equal(base32(Buffer.from(input)), output, input);
  });

  it('hashes ICD:value: the test vectors of phoss-smp#362 and #482, the SML specification and Policy 7', () => {
    const vectors: [string, string][] = [
      // phax/phoss-smp#362 (dig of the production zone)
      ['0208:0677424046', 'yrudm3nqrm76uobzh4griobewmqd4mx574cfdtm75zphrex4ydya'],
      // phax/phoss-smp#482 (dig of the acceptance zone)
      ['0242:001066', 'tit36qle62y2yvwovq5nxg6rquymoabfh4ng7xvgtzmaehfre5pa'],
      // Peppol SML specification's example, as phax/peppol-commons PeppolNaptrURLProviderTest checks it
      ['0010:5798000000001', 'xukhfqabqziki3ykvr2fhr4snfa3pf5vpq6k4tonv3lmvsy5arvq'],
      ['0088:1234567890123', 'sjsyvccmqyjxk3weuapffq4x3umcrf4qryherj4vovhmonh7gccq'],
      // Policy for use of Identifiers, POLICY 7: the value is lower-cased before hashing
      ['0088:123abc', 'y7dzfxaf3d4cjz4kcgrxtec6twvcga4ky7zwa5boif6mswd4tdrq'],
      ['0088:123ABC', 'y7dzfxaf3d4cjz4kcgrxtec6twvcga4ky7zwa5boif6mswd4tdrq'],
    ];
    for (const [id, label] of vectors) {
      assert.equal(smlLabel(id), label, id);
      assert.equal(label.length, 52);
    }
  });

  it('puts the hashed label, the scheme and the zone together, with no B-<md5> form', () => {
    assert.equal(
      smlName('0208:0677424046', SML_ZONES.ecProduction),
      'yrudm3nqrm76uobzh4griobewmqd4mx574cfdtm75zphrex4ydya.iso6523-actorid-upis.edelivery.tech.ec.europa.eu',
    );
    assert.equal(
      smlName('9915:test', `${SML_ZONES.peppolTest}.`),
      'eh5boavaktmbgzyh2a63dz4qov33fvp5nsdvqklucfraayoodw6a.iso6523-actorid-upis.participant.sml.test.tech.peppol.org',
    );
    assert.ok(isDnsName(smlName('0208:0677424046', SML_ZONES.peppolProduction)));
    assert.doesNotMatch(smlName('0007:5592672736', SML_ZONES.ecProduction), /^b-/i);
  });

  it('reads the SMP URL from a U-NAPTR regexp, and nothing else', () => {
    assert.deepEqual(smpUrlFromRegexp('!.*!https://smp.example.com!'), { url: 'https://smp.example.com' });
    assert.deepEqual(smpUrlFromRegexp('!^.*$!https://smp.elma-smp.no/!'), { url: 'https://smp.elma-smp.no' });
    assert.deepEqual(smpUrlFromRegexp('#.*#https://test.erechnung.gv.at/smp#'), {
      url: 'https://test.erechnung.gv.at/smp',
    });
    for (const bad of ['', '!.*!', '!.*!!', '!(.*)!https://x!', '!.*!https://x!g', '!.*!mailto:x@y!']) {
      assert.ok('problem' in smpUrlFromRegexp(bad), bad);
    }
  });
});

describe('DNS servers as configured', () => {
  it('reads host[:port] for IPv4 and IPv6 addresses', () => {
    assert.deepEqual(parseDnsServer('8.8.8.8'), { host: '8.8.8.8', port: 53 });
    assert.deepEqual(parseDnsServer(' 127.0.0.1:5353 '), { host: '127.0.0.1', port: 5353 });
    assert.deepEqual(parseDnsServer('[::1]:5353'), { host: '::1', port: 5353 });
    assert.deepEqual(parseDnsServer('[2001:db8::1]'), { host: '2001:db8::1', port: 53 });
    assert.deepEqual(parseDnsServer('2001:db8::1'), { host: '2001:db8::1', port: 53 });
    for (const bad of [
      '',
      'dns.example.org',
      '1.2.3',
      '1.2.3.4:0',
      '1.2.3.4:70000',
      '[::1',
      '[1.2.3.4]:53',
      '1.2.3.4:x',
    ]) {
      assert.equal(parseDnsServer(bad), null, bad);
    }
  });

  it("defaults to the system's resolvers", () => {
    assert.deepEqual(
      systemDnsServers(),
      getServers().map((s) => parseDnsServer(s)),
    );
  });
});
