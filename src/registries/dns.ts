/**
 * A small DNS client for the look-ups Node's resolver cannot make: one question to one server over
 * UDP, again over TCP when the answer comes back truncated (RFC 1035 §4.2, RFC 7766), with the whole
 * decoded message returned (TTLs, rcode, authority section), so a caller can tell NXDOMAIN from
 * SERVFAIL and read the negative TTL of the zone's SOA. The wire format is dns-packet's; the
 * sockets, deadlines and bounds are here.
 *
 * Every failure is a value: a timeout, a socket error, or an answer that cannot be the answer to
 * this question (another id, another question, not a response, undecodable, over the size cap) is
 * never taken for one. Datagrams from another address than the server's are not read at all: the
 * UDP socket is connected to the server.
 */
import { randomInt } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { getServers } from 'node:dns';
import { connect, isIP, type Socket as TcpSocket } from 'node:net';
import * as packet from 'dns-packet';
import { type DnsServer, describeServer, isDnsName, parseDnsServer } from '../lib/dns-names.js';

export { type DnsServer, describeServer, isDnsName, parseDnsServer };

export type DnsRecordType = 'NAPTR' | 'SOA' | 'A' | 'AAAA' | 'TXT' | 'CNAME';

export type DnsMessage = packet.DecodedPacket;

export interface DnsQuery {
  name: string;
  type: DnsRecordType;
  server: DnsServer;
  /** The deadline of the whole exchange (UDP and, after a truncated answer, TCP). */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface DnsResponse {
  ok: true;
  message: DnsMessage;
  /** The rcode of the answer, e.g. `NOERROR`, `NXDOMAIN`, `SERVFAIL`. */
  rcode: string;
  transport: 'udp' | 'tcp';
}

export interface DnsFailure {
  ok: false;
  /** `timeout`: no answer in time; `cancelled`: the caller's signal; `network`: socket error; `bad_response`: not an answer to the question. */
  kind: 'timeout' | 'cancelled' | 'network' | 'bad_response';
  message: string;
}

export type DnsOutcome = DnsResponse | DnsFailure;

/** The port: one question to one server. */
export type DnsTransport = (query: DnsQuery) => Promise<DnsOutcome>;

/** The UDP payload size announced in EDNS(0): the DNS Flag Day 2020 value, which avoids fragmentation. */
export const EDNS_UDP_PAYLOAD = 1232;

/** The largest DNS message (its length is a 16-bit number over TCP). */
export const MAX_DNS_MESSAGE = 65_535;

const RCODE_NAMES = [
  'NOERROR',
  'FORMERR',
  'SERVFAIL',
  'NXDOMAIN',
  'NOTIMP',
  'REFUSED',
  'YXDOMAIN',
  'YXRRSET',
  'NXRRSET',
  'NOTAUTH',
  'NOTZONE',
];

export function rcodeName(flags: number | undefined): string {
  const code = (flags ?? 0) & 0xf;
  return RCODE_NAMES[code] ?? `RCODE_${code}`;
}

/** The system's resolvers (`dns.getServers()`, from /etc/resolv.conf on Linux). */
export function systemDnsServers(): DnsServer[] {
  return getServers()
    .map(parseDnsServer)
    .filter((server): server is DnsServer => server !== null);
}

function encodeQuery(id: number, name: string, type: DnsRecordType, edns: boolean): Buffer {
  if (!isDnsName(name)) throw new Error(`"${name.slice(0, 80)}" is not a name DNS can carry`);
  return packet.encode({
    type: 'query',
    id,
    flags: packet.RECURSION_DESIRED,
    questions: [{ type, name, class: 'IN' }],
    additionals: !edns
      ? []
      : [
          {
            type: 'OPT',
            name: '.',
            udpPayloadSize: EDNS_UDP_PAYLOAD,
            extendedRcode: 0,
            ednsVersion: 0,
            flags: 0,
            flag_do: false,
            options: [],
          },
        ],
  });
}

const sameName = (a: string, b: string) =>
  a.replace(/\.$/, '').toLowerCase() === b.replace(/\.$/, '').toLowerCase();

/**
 * The decoded message when it answers this question, a failure when it cannot, or null when it is
 * not for this query at all (another id: a late answer to an earlier query, or a forgery) and the
 * wait goes on.
 */
function readAnswer(
  bytes: Buffer,
  id: number,
  name: string,
  type: DnsRecordType,
): DnsMessage | DnsFailure | null {
  if (bytes.length < 12)
    return { ok: false, kind: 'bad_response', message: 'a DNS answer shorter than its header' };
  if (bytes.readUInt16BE(0) !== id) return null;
  let message: DnsMessage;
  try {
    message = packet.decode(bytes);
  } catch (error) {
    return {
      ok: false,
      kind: 'bad_response',
      message: `an undecodable DNS answer (${error instanceof Error ? error.message : String(error)})`,
    };
  }
  if (message.type !== 'response')
    return { ok: false, kind: 'bad_response', message: 'a DNS message that is not a response' };
  const question = message.questions?.[0];
  // A server that refuses or fails may leave the question out; one that names another question did not answer ours.
  if (question && (!sameName(question.name, name) || question.type !== type)) {
    return {
      ok: false,
      kind: 'bad_response',
      message: `a DNS answer to another question (${question.name} ${question.type})`,
    };
  }
  return message;
}

/** The deadline of one exchange: a timer and the caller's signal, as one abort. */
function deadline(query: DnsQuery) {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      controller.abort();
    },
    Math.max(1, query.timeoutMs),
  );
  const onCancel = () => controller.abort();
  query.signal?.addEventListener('abort', onCancel, { once: true });
  if (query.signal?.aborted) onCancel();
  return {
    signal: controller.signal,
    failure(): DnsFailure {
      return timedOut
        ? {
            ok: false,
            kind: 'timeout',
            message: `no DNS answer from ${describeServer(query.server)} within ${query.timeoutMs} ms`,
          }
        : { ok: false, kind: 'cancelled', message: 'the DNS query was cancelled' };
    },
    done() {
      clearTimeout(timer);
      query.signal?.removeEventListener('abort', onCancel);
    },
  };
}

type Exchange = { ok: true; message: DnsMessage } | DnsFailure;

function overUdp(
  query: DnsQuery,
  id: number,
  bytes: Buffer,
  signal: AbortSignal,
): Promise<Exchange | 'aborted'> {
  return new Promise((resolve) => {
    const socket: Socket = createSocket(isIP(query.server.host) === 6 ? 'udp6' : 'udp4');
    let settled = false;
    const settle = (result: Exchange | 'aborted') => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      socket.close();
      resolve(result);
    };
    const onAbort = () => settle('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) return onAbort();
    socket.on('error', (error) =>
      settle({ ok: false, kind: 'network', message: `DNS over UDP: ${error.message}` }),
    );
    socket.on('message', (datagram) => {
      const answer = readAnswer(datagram, id, query.name, query.type);
      if (answer === null) return;
      settle('ok' in answer ? answer : { ok: true, message: answer });
    });
    socket.connect(query.server.port, query.server.host, () => {
      socket.send(bytes, (error) => {
        if (error) settle({ ok: false, kind: 'network', message: `DNS over UDP: ${error.message}` });
      });
    });
  });
}

function overTcp(
  query: DnsQuery,
  id: number,
  bytes: Buffer,
  signal: AbortSignal,
): Promise<Exchange | 'aborted'> {
  return new Promise((resolve) => {
    const socket: TcpSocket = connect({ host: query.server.host, port: query.server.port });
    let settled = false;
    const settle = (result: Exchange | 'aborted') => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(result);
    };
    const onAbort = () => settle('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) return onAbort();
    const length = Buffer.alloc(2);
    length.writeUInt16BE(bytes.length);
    socket.on('connect', () => socket.write(Buffer.concat([length, bytes])));
    socket.on('error', (error) =>
      settle({ ok: false, kind: 'network', message: `DNS over TCP: ${error.message}` }),
    );
    const chunks: Buffer[] = [];
    let received = 0;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      // The 2-byte length bounds the message: at most 2 + 65,535 bytes are ever kept.
      if (received > 2 + MAX_DNS_MESSAGE) {
        settle({ ok: false, kind: 'bad_response', message: 'a DNS answer over TCP longer than its length' });
        return;
      }
      const all = Buffer.concat(chunks, received);
      if (all.length < 2) return;
      const size = all.readUInt16BE(0);
      if (all.length < 2 + size) return;
      const answer = readAnswer(all.subarray(2, 2 + size), id, query.name, query.type);
      if (answer === null) {
        settle({ ok: false, kind: 'bad_response', message: 'a DNS answer over TCP with another id' });
        return;
      }
      settle('ok' in answer ? answer : { ok: true, message: answer });
    });
    socket.on('end', () =>
      settle({
        ok: false,
        kind: 'network',
        message: 'DNS over TCP: the server closed the connection before answering',
      }),
    );
  });
}

/** One question over UDP, then over TCP when the UDP answer is truncated. */
async function exchange(
  query: DnsQuery,
  edns: boolean,
  signal: AbortSignal,
): Promise<DnsOutcome | 'aborted'> {
  const id = randomInt(0, 0x10000);
  const bytes = encodeQuery(id, query.name, query.type, edns);
  const udp = await overUdp(query, id, bytes, signal);
  if (udp === 'aborted' || !udp.ok) return udp;
  if (!udp.message.flag_tc) {
    return { ok: true, message: udp.message, rcode: rcodeName(udp.message.flags), transport: 'udp' };
  }
  const tcp = await overTcp(query, id, bytes, signal);
  if (tcp === 'aborted' || !tcp.ok) return tcp;
  return { ok: true, message: tcp.message, rcode: rcodeName(tcp.message.flags), transport: 'tcp' };
}

/**
 * The default transport: UDP with EDNS(0), TCP for a truncated answer, and the question again
 * without EDNS(0) when a server answers FORMERR to it (RFC 6891 §7), all within one deadline.
 */
export const socketDnsTransport: DnsTransport = async (query) => {
  const limit = deadline(query);
  try {
    let result = await exchange(query, true, limit.signal);
    if (result !== 'aborted' && result.ok && result.rcode === 'FORMERR') {
      result = await exchange(query, false, limit.signal);
    }
    return result === 'aborted' ? limit.failure() : result;
  } catch (error) {
    // encode throws for a name DNS cannot carry (a label over 63 bytes, a name over 255).
    return {
      ok: false,
      kind: 'bad_response',
      message: `the DNS query could not be made: ${error instanceof Error ? error.message : String(error)}`,
    };
  } finally {
    limit.done();
  }
};
