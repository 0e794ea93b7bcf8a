import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import * as packet from 'dns-packet';
import { type DnsServer, socketDnsTransport } from '../../../src/registries/dns.js';
import { createSmlClient, SML_ZONES, type SmlLookup, smlName } from '../../../src/registries/peppol-sml.js';
import { createPeppolSmlSimulator, type PeppolSmlSimulator } from '../../../src/simulators/peppol-sml.js';

const ZONE = SML_ZONES.peppolProduction;
const SMP_BASE = 'http://127.0.0.1:8099/peppol-smp';

function expect<K extends SmlLookup['kind']>(result: SmlLookup, kind: K): Extract<SmlLookup, { kind: K }> {
  assert.equal(result.kind, kind, JSON.stringify(result));
  return result as Extract<SmlLookup, { kind: K }>;
}

/** A UDP "DNS server" answering each query with what `reply` makes of it (null: silence). */
async function fakeDns(reply: (query: packet.DecodedPacket, raw: Buffer) => Buffer | null) {
  const socket: Socket = createSocket('udp4');
  socket.on('message', (message, from) => {
    const answer = reply(packet.decode(message), message);
    if (answer) socket.send(answer, from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address() as AddressInfo;
  return {
    server: { host: '127.0.0.1', port } as DnsServer,
    close: () => new Promise<void>((r) => socket.close(() => r())),
  };
}

function response(query: packet.DecodedPacket, rest: Partial<packet.Packet>, rcode = 0): Buffer {
  return packet.encode({
    type: 'response',
    id: query.id ?? 0,
    flags: packet.AUTHORITATIVE_ANSWER | rcode,
    questions: query.questions ?? [],
    ...rest,
  });
}

describe('Peppol SML client against the SML simulator (DNS over UDP and TCP on 127.0.0.1)', () => {
  let sml: PeppolSmlSimulator;
  let server: DnsServer;
  const client = (options: { timeoutMs?: number; servers?: DnsServer[]; zone?: string } = {}) =>
    createSmlClient({
      zone: options.zone ?? ZONE,
      servers: options.servers ?? [server],
      timeoutMs: options.timeoutMs ?? 2_000,
      attempts: 1,
    });

  before(async () => {
    sml = createPeppolSmlSimulator({ smpBase: SMP_BASE });
    const { port } = await sml.listen(0);
    server = { host: '127.0.0.1', port };
  });
  after(() => sml.close());
  beforeEach(() => sml.control({ reset: true }));

  it('asks the hashed name of the participant and reads the Meta:SMP record: the SMP URL and its TTL', async () => {
    const result = expect(await client().lookup('0208:0999000030'), 'registered');
    const name = smlName('0208:0999000030', ZONE);
    assert.equal(result.name, name);
    assert.match(name, /^[a-z2-7]{52}\.iso6523-actorid-upis\.participant\.sml\.prod\.tech\.peppol\.org$/);
    assert.equal(result.smpUrl, `${SMP_BASE}/invoices`);
    assert.equal(result.ttlSeconds, 60);
    assert.deepEqual(
      [result.record.order, result.record.preference, result.record.flags, result.record.services],
      [100, 10, 'U', 'Meta:SMP'],
    );
    const stats = sml.stats() as { names: string[]; udp: number; tcp: number };
    assert.deepEqual(stats.names, [name]);
    assert.deepEqual([stats.udp, stats.tcp], [1, 0]);
  });

  it('hashes the identifier in lower case: an upper-case value asks the same name', async () => {
    const upper = expect(await client().lookup('9925:BE0999000030'), 'registered');
    assert.equal(upper.name, smlName('9925:be0999000030', ZONE));
  });

  it('a Belgian company is found under both 0208 and 9925; the URL loses the trailing slash of the record', async () => {
    expect(await client().lookup('0208:0999000030'), 'registered');
    expect(await client().lookup('9925:be0999000030'), 'registered');
    assert.equal(expect(await client().lookup('0192:999000002'), 'registered').smpUrl, `${SMP_BASE}/orders`);
  });

  it('NXDOMAIN is "not registered", with the negative TTL of the SOA in the authority section', async () => {
    const result = expect(await client().lookup('0208:0000000097'), 'not_registered');
    assert.equal(result.negative, 'nxdomain');
    assert.equal(result.negativeTtlSeconds, 60, 'min(SOA TTL 3600, minimum 60)');
  });

  it('NODATA (the name exists without a NAPTR record) is "not registered" too, with the SOA negative TTL', async () => {
    const result = expect(await client().lookup('9910:hu99900009'), 'not_registered');
    assert.equal(result.negative, 'nodata');
    assert.equal(result.negativeTtlSeconds, 60);
  });

  it('a NAPTR record without the Meta:SMP service is registered, without an SMP (phoss-smp#482)', async () => {
    const result = expect(await client().lookup('0184:99900008'), 'registered_without_smp');
    assert.match(result.problem, /no NAPTR record has flag U and service Meta:SMP/);
    assert.equal(result.ttlSeconds, 60);
    assert.equal(result.records.length, 1);
  });

  it('SERVFAIL, REFUSED and no answer are "unknown", never "not registered"', async () => {
    const servfail = expect(await client().lookup('9914:atu99990019'), 'unavailable');
    assert.deepEqual([servfail.reason, servfail.detail, servfail.retryable], ['down', 'SERVFAIL', true]);
    const refused = expect(await client().lookup('9945:pl9990000008'), 'unavailable');
    assert.deepEqual([refused.reason, refused.detail], ['down', 'REFUSED']);
    const silent = expect(await client({ timeoutMs: 200 }).lookup('9946:pt999000004'), 'unavailable');
    assert.deepEqual([silent.reason, silent.detail], ['timeout', 'timeout']);
  });

  it('the failure modes are selectable for every name, and per participant', async () => {
    for (const fail of ['servfail', 'refused'] as const) {
      sml.control({ fail });
      const result = expect(await client().lookup('0208:0999000030'), 'unavailable');
      assert.equal(result.detail, fail.toUpperCase());
    }
    sml.control({ fail: 'no_answer' });
    expect(await client({ timeoutMs: 200 }).lookup('0208:0000000097'), 'unavailable');
    sml.control({ fail: null, failFor: { '0208:0999000030': 'servfail' } });
    expect(await client().lookup('0208:0999000030'), 'unavailable');
    expect(await client().lookup('9925:be0999000030'), 'registered');
  });

  it('a name outside the served zones is REFUSED: unknown', async () => {
    const result = expect(await client({ zone: 'sml.example.org' }).lookup('0208:0999000030'), 'unavailable');
    assert.equal(result.detail, 'REFUSED');
  });

  it('a truncated UDP answer is asked again over TCP', async () => {
    const result = expect(await client().lookup('0211:it99900000011'), 'registered');
    assert.equal(result.smpUrl, `${SMP_BASE}/invoices`, 'the first record in order is the Meta:SMP one');
    const stats = sml.stats() as { udp: number; tcp: number; truncated: number };
    assert.deepEqual([stats.udp, stats.tcp, stats.truncated], [1, 1, 1]);
    sml.control({ resetStats: true, forceTcp: true });
    expect(await client().lookup('0208:0999000030'), 'registered');
    assert.deepEqual((sml.stats() as { tcp: number }).tcp, 1);
  });

  it('the next server is asked when one fails, and a failure on every one is unknown', async () => {
    const broken = createPeppolSmlSimulator({ smpBase: SMP_BASE });
    const { port } = await broken.listen(0);
    try {
      broken.control({ fail: 'servfail' });
      const both = createSmlClient({
        zone: ZONE,
        servers: [{ host: '127.0.0.1', port }, server],
        timeoutMs: 2_000,
      });
      expect(await both.lookup('0208:0999000030'), 'registered');
      assert.equal((broken.stats() as { queries: number }).queries, 1);
      const onlyBroken = createSmlClient({
        zone: ZONE,
        servers: [{ host: '127.0.0.1', port }],
        timeoutMs: 2_000,
        attempts: 2,
      });
      const result = expect(await onlyBroken.lookup('0208:0999000030'), 'unavailable');
      assert.equal(result.detail, 'SERVFAIL');
      assert.equal((broken.stats() as { queries: number }).queries, 3);
    } finally {
      await broken.close();
    }
  });

  it("the caller's signal ends the wait: unknown", async () => {
    sml.control({ fail: 'no_answer' });
    const controller = new AbortController();
    const pending = client({ timeoutMs: 10_000 }).lookup('0208:0999000030', controller.signal);
    controller.abort();
    const result = expect(await pending, 'unavailable');
    assert.equal(result.detail, 'cancelled');
  });
});

describe('Peppol SML client against DNS answers made for the case', () => {
  it('takes the least TTL over a CNAME chain, and min(SOA TTL, minimum) as the negative TTL', async () => {
    const name = smlName('0208:0999000030', ZONE);
    const fake = await fakeDns((query) => {
      const asked = query.questions?.[0]?.name ?? '';
      if (asked === name) {
        return response(query, {
          answers: [
            { type: 'CNAME', name, ttl: 30, data: 'target.example.org' },
            {
              type: 'NAPTR',
              name: 'target.example.org',
              ttl: 300,
              data: {
                order: 100,
                preference: 10,
                flags: 'u',
                services: 'meta:smp',
                regexp: '!^.*$!https://smp.example.org/smp/!',
                replacement: '.',
              },
            },
          ],
        });
      }
      return response(
        query,
        {
          authorities: [
            {
              type: 'SOA',
              name: ZONE,
              ttl: 30,
              data: { mname: 'ns', rname: 'h', serial: 1, refresh: 1, retry: 1, expire: 1, minimum: 900 },
            },
          ],
        },
        3,
      );
    });
    try {
      const client = createSmlClient({ zone: ZONE, servers: [fake.server], timeoutMs: 2_000 });
      const found = expect(await client.lookup('0208:0999000030'), 'registered');
      assert.equal(found.smpUrl, 'https://smp.example.org/smp', 'flag and service compared without case');
      assert.equal(found.ttlSeconds, 30);
      const missing = expect(await client.lookup('0208:0000000097'), 'not_registered');
      assert.equal(missing.negativeTtlSeconds, 30);
    } finally {
      await fake.close();
    }
  });

  it('a record whose regexp is not the match-everything pattern, or gives no http(s) URL, makes no SMP address', async () => {
    const regexps = [
      '!(a+)+$!https://evil.example!',
      '!.*!ftp://smp.example!',
      '!.*!\\1!',
      '!.*!https://smp.example?x=1!',
    ];
    let index = 0;
    const fake = await fakeDns((query) =>
      response(query, {
        answers: [
          {
            type: 'NAPTR',
            name: query.questions?.[0]?.name ?? '',
            ttl: 60,
            data: {
              order: 100,
              preference: 10,
              flags: 'U',
              services: 'Meta:SMP',
              regexp: regexps[index++] ?? '',
              replacement: '.',
            },
          },
        ],
      }),
    );
    try {
      const client = createSmlClient({ zone: ZONE, servers: [fake.server], timeoutMs: 2_000 });
      for (const problem of [
        /match-everything/,
        /not an http\(s\) URL/,
        /match group/,
        /not an SMP base URL/,
      ]) {
        const result = expect(await client.lookup('0208:0999000030'), 'registered_without_smp');
        assert.match(result.problem, problem);
      }
    } finally {
      await fake.close();
    }
  });

  it('an answer to another question, a message that is not a response, or garbage is never an answer', async () => {
    const replies: ((q: packet.DecodedPacket) => Buffer)[] = [
      (q) =>
        packet.encode({
          type: 'response',
          id: q.id ?? 0,
          flags: 0,
          questions: [{ type: 'NAPTR', name: 'other.example.org' }],
        }),
      (q) => packet.encode({ type: 'query', id: q.id ?? 0, flags: 0, questions: q.questions ?? [] }),
      (q) =>
        Buffer.concat([Buffer.from([(q.id ?? 0) >> 8, (q.id ?? 0) & 0xff]), Buffer.from('garbage, not DNS')]),
    ];
    let index = 0;
    const fake = await fakeDns((query) => replies[index++]?.(query) ?? null);
    try {
      const client = createSmlClient({ zone: ZONE, servers: [fake.server], timeoutMs: 2_000, attempts: 1 });
      for (const message of [/another question/, /not a response/, /undecodable/]) {
        const result = expect(await client.lookup('0208:0999000030'), 'unavailable');
        assert.equal(result.reason, 'bad_response');
        assert.match(result.message, message);
      }
    } finally {
      await fake.close();
    }
  });

  it('an answer with another id is ignored (a late or forged datagram), the right one taken', async () => {
    const socket = createSocket('udp4');
    socket.on('message', (message, from) => {
      const query = packet.decode(message);
      socket.send(response({ ...query, id: ((query.id ?? 0) + 1) & 0xffff }, {}, 0), from.port, from.address);
      socket.send(response(query, {}, 3), from.port, from.address);
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    try {
      const { port } = socket.address() as AddressInfo;
      const client = createSmlClient({
        zone: ZONE,
        servers: [{ host: '127.0.0.1', port }],
        timeoutMs: 2_000,
      });
      expect(await client.lookup('0208:0999000030'), 'not_registered');
    } finally {
      await new Promise<void>((r) => socket.close(() => r()));
    }
  });

  it('a server that answers FORMERR to EDNS(0) is asked again without it (RFC 6891)', async () => {
    const seen: boolean[] = [];
    const fake = await fakeDns((query) => {
      const edns = (query.additionals ?? []).some((a) => a.type === 'OPT');
      seen.push(edns);
      return edns ? response(query, {}, 1) : response(query, {}, 3);
    });
    try {
      const client = createSmlClient({ zone: ZONE, servers: [fake.server], timeoutMs: 2_000 });
      expect(await client.lookup('0208:0999000030'), 'not_registered');
      assert.deepEqual(seen, [true, false]);
    } finally {
      await fake.close();
    }
  });

  it('a name DNS cannot carry is refused before any query', async () => {
    const outcome = await socketDnsTransport({
      name: `${'a'.repeat(64)}.example.org`,
      type: 'NAPTR',
      server: { host: '127.0.0.1', port: 9 },
      timeoutMs: 1_000,
    });
    assert.ok(!outcome.ok);
    assert.equal(outcome.kind, 'bad_response');
  });
});
