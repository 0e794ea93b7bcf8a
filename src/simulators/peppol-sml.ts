/**
 * Peppol SML simulator: an authoritative DNS server, on a UDP and a TCP port of its own, for the
 * SML zones. It answers the U-NAPTR record of the documented participants' hashed names
 * (peppol-participants.ts) as the SML publishes them:
 * `<hash>.iso6523-actorid-upis.<zone>. 60 IN NAPTR 100 10 "U" "Meta:SMP" "!.*!https://smp.example!" .`
 * (phax/phoss-smp#362 and #482, OxalisCommunity/Oxalis-AS4#179: order 100, preference 10, TTL 60),
 * NXDOMAIN with the zone's SOA in the authority section for every other name in the zone, NODATA
 * (the SOA, no answer) for another record type at a participant's name (and for NAPTR at the name
 * of the participant documented with a TXT record only), and REFUSED for names
 * outside its zones. The SOA's values are the simulator's own (no recording of the SML's was found):
 * TTL 3600, minimum 60, so the negative TTL (RFC 2308) is 60 seconds.
 *
 * UDP answers larger than the size the query allows (512 bytes, or its EDNS(0) payload size) come
 * back truncated (TC, no records), to be asked again over TCP, as RFC 1035 and RFC 6891 say.
 *
 * Controls (`control()`, or `POST /_control` with `{"peppolSml": {...}}` where it is mounted):
 * `fail`: `servfail` | `refused` | `no_answer` | null for every query; `failFor`: the same per
 * participant (`{"0208:0999000030": "servfail"}`); `unregistered`: participants answered NXDOMAIN
 * as if they had left Peppol (`["9930:de999000009"]`, `[]` for none); `forceTcp`: every UDP answer truncated;
 * `latencyMs`; `smpBase`: the URL the simulated SMPs are under; `reset`.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server, type Socket as TcpSocket } from 'node:net';
import * as packet from 'dns-packet';
import { SML_ZONES, smlName } from '../registries/peppol-sml.js';
import { sendJson } from './controls.js';
import { SIMULATED_PARTICIPANTS, type SimulatedParticipant } from './peppol-participants.js';
import type { SimulatorModule } from './types.js';

type FailMode = 'servfail' | 'refused' | 'no_answer';

export interface PeppolSmlSimulatorOptions {
  /** Zones served (default: OpenPeppol's production and test zones and the Commission's two). */
  zones?: readonly string[];
  /** Where the simulated SMPs are, e.g. `http://127.0.0.1:8099/peppol-smp`. */
  smpBase?: string;
  participants?: readonly SimulatedParticipant[];
}

export interface PeppolSmlSettings {
  fail: FailMode | null;
  failFor: Record<string, FailMode>;
  /** Participants answered NXDOMAIN, as if their SMP had removed them. */
  unregistered: string[];
  forceTcp: boolean;
  latencyMs: number;
  smpBase: string;
}

export interface PeppolSmlStats {
  queries: number;
  udp: number;
  tcp: number;
  truncated: number;
  /** Names asked, in order (the last 100). */
  names: string[];
  rcodes: Record<string, number>;
  unanswered: number;
}

export interface PeppolSmlSimulator extends SimulatorModule {
  /** Binds the DNS server on UDP and TCP at the same port (0: any free one). */
  listen(port: number, host?: string): Promise<{ host: string; port: number }>;
  close(): Promise<void>;
  control(command: Record<string, unknown>): Record<string, unknown>;
  stats(): Record<string, unknown>;
  /** The hashed names of the documented participants in the first zone. */
  names(): Record<string, string>;
}

const RECORD_TTL = 60;
const SOA_TTL = 3600;
const SOA_MINIMUM = 60;
const FAIL_MODES = new Set<FailMode>(['servfail', 'refused', 'no_answer']);

const bare = (name: string) => name.replace(/\.$/, '').toLowerCase();

function defaults(options: PeppolSmlSimulatorOptions): PeppolSmlSettings {
  return {
    fail: null,
    failFor: {},
    unregistered: [],
    forceTcp: false,
    latencyMs: 0,
    smpBase: options.smpBase ?? 'http://127.0.0.1/peppol-smp',
  };
}

export function createPeppolSmlSimulator(options: PeppolSmlSimulatorOptions = {}): PeppolSmlSimulator {
  const zones = (options.zones ?? Object.values(SML_ZONES)).map(bare);
  const participants = options.participants ?? SIMULATED_PARTICIPANTS;
  /** Hashed name (any zone) → participant. */
  const byName = new Map<string, SimulatedParticipant>();
  for (const zone of zones) for (const p of participants) byName.set(smlName(p.id, zone), p);
  let settings = defaults(options);
  let counters = emptyStats();
  let udp: Socket | null = null;
  let tcp: Server | null = null;
  const connections = new Set<TcpSocket>();

  function emptyStats(): PeppolSmlStats {
    return { queries: 0, udp: 0, tcp: 0, truncated: 0, names: [], rcodes: {}, unanswered: 0 };
  }

  function zoneOf(name: string): string | undefined {
    return zones.find((zone) => name === zone || name.endsWith(`.${zone}`));
  }

  function soa(zone: string): packet.Answer {
    return {
      type: 'SOA',
      name: zone,
      ttl: SOA_TTL,
      data: {
        mname: `ns1.${zone}`,
        rname: `hostmaster.${zone}`,
        serial: 2026032001,
        refresh: 3600,
        retry: 600,
        expire: 604800,
        minimum: SOA_MINIMUM,
      },
    };
  }

  function naptr(name: string, order: number, services: string, url: string): packet.Answer {
    return {
      type: 'NAPTR',
      name,
      ttl: RECORD_TTL,
      data: { order, preference: 10, flags: 'U', services, regexp: `!.*!${url}!`, replacement: '.' },
    };
  }

  function records(name: string, participant: SimulatedParticipant): packet.Answer[] {
    const entry = participant.sml;
    const base = settings.smpBase.replace(/\/+$/, '');
    switch (entry.kind) {
      case 'smp':
        return [naptr(name, 100, 'Meta:SMP', `${base}/${entry.smp}${entry.trailingSlash ? '/' : ''}`)];
      case 'many_records':
        // Forty records in order: the first Meta:SMP one wins; the others name other services.
        return [
          naptr(name, 100, 'Meta:SMP', `${base}/${entry.smp}`),
          ...Array.from({ length: 39 }, (_, i) =>
            naptr(name, 101 + i, `Meta:OTHER${i}`, `${base}/elsewhere-${String(i).padStart(2, '0')}`),
          ),
        ];
      case 'misconfigured':
        return [naptr(name, 100, `${base}/invoices`, `${base}/invoices`)];
      case 'private_smp':
        return [naptr(name, 100, 'Meta:SMP', 'https://10.0.0.1/smp')];
      default:
        return [];
    }
  }

  type Reply = { rcode: string; answers: packet.Answer[]; authorities: packet.Answer[] } | 'no_answer';

  function decide(name: string, type: string): Reply {
    const zone = zoneOf(name);
    if (!zone) return { rcode: 'REFUSED', answers: [], authorities: [] };
    const participant = byName.get(name);
    const mode = (participant && settings.failFor[participant.id]) || settings.fail;
    const own = participant?.sml.kind;
    const fail = mode ?? (own === 'servfail' || own === 'refused' || own === 'no_answer' ? own : null);
    if (fail === 'no_answer') return 'no_answer';
    if (fail) return { rcode: fail.toUpperCase(), answers: [], authorities: [] };
    if (!participant || settings.unregistered.includes(participant.id)) {
      return name === zone && type === 'SOA'
        ? { rcode: 'NOERROR', answers: [soa(zone)], authorities: [] }
        : { rcode: 'NXDOMAIN', answers: [], authorities: [soa(zone)] };
    }
    if (participant.sml.kind === 'no_naptr') {
      const txt: packet.Answer = { type: 'TXT', name, ttl: RECORD_TTL, data: 'no SMP' };
      return type === 'TXT'
        ? { rcode: 'NOERROR', answers: [txt], authorities: [] }
        : { rcode: 'NOERROR', answers: [], authorities: [soa(zone)] };
    }
    if (type !== 'NAPTR') return { rcode: 'NOERROR', answers: [], authorities: [soa(zone)] };
    return { rcode: 'NOERROR', answers: records(name, participant), authorities: [] };
  }

  /** The encoded answer to a query, or null to stay silent. */
  function answer(query: Buffer, over: 'udp' | 'tcp'): Buffer | null {
    let decoded: packet.DecodedPacket;
    try {
      decoded = packet.decode(query);
    } catch {
      return null;
    }
    const question = decoded.questions?.[0];
    counters.queries++;
    counters[over]++;
    if (!question || decoded.type !== 'query') return null;
    const name = bare(question.name);
    counters.names = [...counters.names, name].slice(-100);
    const reply = decide(name, question.type);
    if (reply === 'no_answer') {
      counters.unanswered++;
      return null;
    }
    counters.rcodes[reply.rcode] = (counters.rcodes[reply.rcode] ?? 0) + 1;
    const opt = (decoded.additionals ?? []).find((a) => a.type === 'OPT') as packet.OptAnswer | undefined;
    // Authoritative for its zones (not for the names it refuses); the RD bit is echoed, RA not set.
    const flags =
      (reply.rcode === 'REFUSED' ? 0 : packet.AUTHORITATIVE_ANSWER) |
      ((decoded.flags ?? 0) & packet.RECURSION_DESIRED) |
      rcodeNumber(reply.rcode);
    const message = (answers: packet.Answer[], authorities: packet.Answer[], extra = 0) =>
      packet.encode({
        type: 'response',
        id: decoded.id ?? 0,
        flags: flags | extra,
        questions: [question],
        answers,
        authorities,
        ...(opt
          ? {
              additionals: [
                {
                  type: 'OPT',
                  name: '.',
                  udpPayloadSize: 1232,
                  extendedRcode: 0,
                  ednsVersion: 0,
                  flags: 0,
                  flag_do: false,
                  options: [],
                },
              ],
            }
          : {}),
      });
    const full = message(reply.answers, reply.authorities);
    if (over === 'tcp') return full;
    const limit = opt ? Math.max(512, Math.min(opt.udpPayloadSize, 4096)) : 512;
    if (settings.forceTcp || full.length > limit) {
      counters.truncated++;
      return message([], [], packet.TRUNCATED_RESPONSE);
    }
    return full;
  }

  function delay(): Promise<void> {
    return settings.latencyMs > 0
      ? new Promise((resolve) => setTimeout(resolve, settings.latencyMs).unref())
      : Promise.resolve();
  }

  function onDatagram(message: Buffer, from: RemoteInfo) {
    const reply = answer(message, 'udp');
    if (!reply) return;
    void delay().then(() => udp?.send(reply, from.port, from.address));
  }

  function onConnection(socket: TcpSocket) {
    connections.add(socket);
    socket.on('close', () => connections.delete(socket));
    socket.on('error', () => socket.destroy());
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const size = buffered.readUInt16BE(0);
        const query = buffered.subarray(2, 2 + size);
        buffered = buffered.subarray(2 + size);
        const reply = answer(query, 'tcp');
        if (!reply) continue;
        const length = Buffer.alloc(2);
        length.writeUInt16BE(reply.length);
        void delay().then(() => {
          if (!socket.destroyed) socket.write(Buffer.concat([length, reply]));
        });
      }
    });
  }

  async function listen(port: number, host = '127.0.0.1'): Promise<{ host: string; port: number }> {
    // UDP and TCP on one port number: bind TCP first (on the port asked, or any), then UDP on the
    // same number; a port free for one but not the other is retried with another when any will do.
    for (let attempt = 0; attempt < 20; attempt++) {
      const server = createServer(onConnection);
      const bound = await new Promise<number | null>((resolve) => {
        server.once('error', () => resolve(null));
        server.listen(port, host, () => {
          const address = server.address();
          resolve(typeof address === 'object' && address ? address.port : null);
        });
      });
      if (bound === null) {
        if (port !== 0) throw new Error(`the SML simulator cannot listen on TCP ${host}:${port}`);
        continue;
      }
      const socket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
      const ok = await new Promise<boolean>((resolve) => {
        socket.once('error', () => resolve(false));
        socket.bind(bound, host, () => resolve(true));
      });
      if (!ok) {
        socket.close();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        if (port !== 0) throw new Error(`the SML simulator cannot listen on UDP ${host}:${port}`);
        continue;
      }
      socket.on('message', onDatagram);
      socket.on('error', () => {});
      udp = socket;
      tcp = server;
      return { host, port: bound };
    }
    throw new Error('the SML simulator found no port free for both UDP and TCP');
  }

  async function close(): Promise<void> {
    udp?.close();
    udp = null;
    for (const socket of connections) socket.destroy();
    const server = tcp;
    tcp = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  function control(command: Record<string, unknown>): Record<string, unknown> {
    if (command.reset === true) {
      settings = defaults({ ...options, smpBase: settings.smpBase });
      counters = emptyStats();
    }
    if (command.resetStats === true) counters = emptyStats();
    if (
      command.fail === null ||
      (typeof command.fail === 'string' && FAIL_MODES.has(command.fail as FailMode))
    ) {
      settings.fail = command.fail as FailMode | null;
    }
    if (typeof command.failFor === 'object' && command.failFor !== null && !Array.isArray(command.failFor)) {
      for (const [id, mode] of Object.entries(command.failFor)) {
        if (typeof mode === 'string' && FAIL_MODES.has(mode as FailMode))
          settings.failFor[id.toLowerCase()] = mode as FailMode;
        else delete settings.failFor[id.toLowerCase()];
      }
    }
    if (Array.isArray(command.unregistered))
      settings.unregistered = command.unregistered
        .filter((id): id is string => typeof id === 'string')
        .map((id) => id.toLowerCase());
    if (typeof command.forceTcp === 'boolean') settings.forceTcp = command.forceTcp;
    if (typeof command.latencyMs === 'number' && command.latencyMs >= 0)
      settings.latencyMs = command.latencyMs;
    if (typeof command.smpBase === 'string' && /^https?:\/\//.test(command.smpBase))
      settings.smpBase = command.smpBase;
    return structuredClone(settings) as unknown as Record<string, unknown>;
  }

  function names(): Record<string, string> {
    return Object.fromEntries(
      participants.map((p) => [p.id, smlName(p.id, zones[0] ?? SML_ZONES.peppolProduction)]),
    );
  }

  /** `GET /peppol-sml` lists the zones and the documented participants with their names. */
  function handle(_req: IncomingMessage, res: ServerResponse): void {
    sendJson(res, 200, {
      zones,
      participants: participants.map((p) => ({
        id: p.id,
        vat_number: p.vatNumber,
        name: names()[p.id],
        sml: p.sml.kind,
        description: p.description,
      })),
    });
  }

  return {
    prefix: '/peppol-sml',
    handle,
    listen,
    close,
    control,
    stats: () => structuredClone(counters) as unknown as Record<string, unknown>,
    names,
  };
}

function rcodeNumber(rcode: string): number {
  return ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'].indexOf(rcode) & 0xf;
}
