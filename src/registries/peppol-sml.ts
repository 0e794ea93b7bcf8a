/**
 * The Peppol SML (Service Metadata Locator) look-up: where a participant's SMP is, from DNS.
 *
 * The name (Peppol Policy for use of Identifiers 4.4, SML 1.3; phax/peppol-commons
 * PeppolNaptrURLProvider): `base32(sha256(lowercase("ICD:value")))` without `=` padding, lower-cased,
 * then `.iso6523-actorid-upis.` and the SML zone. Its U-NAPTR record with flag `U` and service
 * `Meta:SMP` (both compared without regard to case, RFC 3403/4848 as phax/ph-web's NaptrResolver
 * does) carries the SMP's base URL in its regexp, `!.*!https://smp.example.com!`. The old
 * `B-<md5>` CNAME names were removed from the SML on 2026-02-01 and are not asked.
 *
 * What an answer means:
 * - a usable `Meta:SMP` record: registered, at that SMP, for the record's TTL;
 * - NXDOMAIN: not registered, an authoritative answer, for the negative TTL of the zone's SOA;
 * - NODATA (the name exists, with no NAPTR record): not registered either, a negative answer of
 *   the same kind (RFC 2308), cached the same way: no sender could find an SMP for it;
 * - NAPTR records but none usable (another service, as phoss-smp#482 shows one SMP registering,
 *   or a regexp that gives no http(s) URL): registered (the SML holds a record only an SMP can
 *   make), but without a usable SMP address;
 * - SERVFAIL, REFUSED, another rcode, a timeout, a socket error, an answer that is not one:
 *   unknown, never "not registered". The next configured server is asked before giving up.
 *
 * The regexp is not run as a regular expression: only the match-everything patterns `.*` and
 * `^.*$` are taken (the only ones the SML writes), so a record cannot make the client run a
 * pattern of its choosing, and the replacement is taken literally (a back-reference is refused).
 */
import { createHash } from 'node:crypto';
import type { Answer, NaptrAnswer, NaptrData, SoaAnswer, StringAnswer } from 'dns-packet';
import { SML_ZONES } from '../lib/sml-zones.js';
import {
  type DnsMessage,
  type DnsServer,
  type DnsTransport,
  describeServer,
  socketDnsTransport,
  systemDnsServers,
} from './dns.js';
import type { UnavailableReason } from './port.js';

export { SML_ZONES };

export const PARTICIPANT_SCHEME_LABEL = 'iso6523-actorid-upis';
export const META_SMP_SERVICE = 'Meta:SMP';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** RFC 4648 base32 without padding, in lower case. */
export function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}

/** The hashed label of a participant identifier `ICD:value` (52 characters). */
export function smlLabel(participantId: string): string {
  return base32(createHash('sha256').update(participantId.toLowerCase(), 'utf8').digest());
}

/** The DNS name of a participant identifier `ICD:value` in an SML zone. */
export function smlName(participantId: string, zone: string): string {
  return `${smlLabel(participantId)}.${PARTICIPANT_SCHEME_LABEL}.${zone.replace(/^\.+|\.+$/g, '').toLowerCase()}`;
}

export interface NaptrRecord extends NaptrData {
  ttl: number;
}

export type SmlLookup =
  | {
      kind: 'registered';
      name: string;
      /** The SMP's base URL without a trailing slash, e.g. `https://smp.example.com`. */
      smpUrl: string;
      /** Seconds the answer may be kept: the least TTL of the record and any alias that led to it. */
      ttlSeconds: number;
      record: NaptrRecord;
    }
  | {
      kind: 'registered_without_smp';
      name: string;
      ttlSeconds: number;
      records: NaptrRecord[];
      /** Why no record gives an SMP address. */
      problem: string;
    }
  | {
      kind: 'not_registered';
      name: string;
      /** `nxdomain`: no such name; `nodata`: the name exists without a NAPTR record. */
      negative: 'nxdomain' | 'nodata';
      /** min(SOA TTL, SOA minimum) of the zone's SOA in the authority section (RFC 2308 §5); null without one. */
      negativeTtlSeconds: number | null;
    }
  | {
      kind: 'unavailable';
      name: string;
      reason: Extract<UnavailableReason, 'down' | 'timeout' | 'bad_response'>;
      /** `SERVFAIL`, `REFUSED`, another rcode, `timeout`, `network` or `bad_response`. */
      detail: string;
      retryable: true;
      message: string;
    };

export interface SmlClientOptions {
  /** The SML zone, e.g. `participant.sml.prod.tech.peppol.org`. */
  zone: string;
  /** Resolvers asked in turn; default the system's (`dns.getServers()`). */
  servers?: readonly DnsServer[];
  /** Per attempt. */
  timeoutMs: number;
  /** Queries before giving up, over the servers in turn (default: each server once, at least 2). */
  attempts?: number;
  transport?: DnsTransport;
}

export interface SmlClient {
  readonly zone: string;
  /** Looks up `ICD:value` (as parsed by the peppol module). Never throws. */
  lookup(participantId: string, signal?: AbortSignal): Promise<SmlLookup>;
}

const sameName = (a: string, b: string) =>
  a.replace(/\.$/, '').toLowerCase() === b.replace(/\.$/, '').toLowerCase();

const isNaptr = (a: Answer): a is NaptrAnswer => a.type === 'NAPTR';
const isCname = (a: Answer): a is StringAnswer => a.type === 'CNAME';
const isSoa = (a: Answer): a is SoaAnswer => a.type === 'SOA';

/**
 * The name the answer's records are for: the question's, or where its CNAME/DNAME chain in the
 * answer section leads (a zone may be an alias of another: the test SML's zone was a DNAME of the
 * Commission's, phoss-smp#482). At most 8 steps; returns the TTLs met on the way.
 */
function followAliases(message: DnsMessage, name: string): { target: string; ttls: number[] } {
  let target = name;
  const ttls: number[] = [];
  for (let step = 0; step < 8; step++) {
    const alias = (message.answers ?? []).filter(isCname).find((a) => sameName(a.name, target));
    if (!alias || typeof alias.data !== 'string') break;
    ttls.push(alias.ttl ?? 0);
    target = alias.data;
  }
  return { target, ttls };
}

/** min(SOA TTL, SOA minimum) of the SOA in the authority section, or null (RFC 2308 §5). */
function negativeTtl(message: DnsMessage): number | null {
  const soa = (message.authorities ?? []).find(isSoa);
  if (!soa) return null;
  return Math.min(soa.ttl ?? 0, soa.data.minimum ?? 0);
}

/** The SMP base URL of a U-NAPTR regexp `!.*!https://smp.example.com!`, or why there is none. */
export function smpUrlFromRegexp(regexp: string): { url: string } | { problem: string } {
  const delimiter = regexp[0];
  if (!delimiter || regexp.length < 4) return { problem: `the regexp "${regexp}" is empty` };
  const parts = regexp.slice(1).split(delimiter);
  if (parts.length !== 3) return { problem: `the regexp "${regexp}" is not !pattern!replacement!flags` };
  const [pattern, replacement, flags] = parts as [string, string, string];
  if (pattern !== '.*' && pattern !== '^.*$') {
    return { problem: `the regexp's pattern "${pattern}" is not the match-everything pattern of the SML` };
  }
  if (flags !== '' && flags !== 'i')
    return { problem: `the regexp's flags "${flags}" are not RFC 3402 flags` };
  if (/\\\d/.test(replacement)) return { problem: 'the regexp refers to a match group' };
  let url: URL;
  try {
    url = new URL(replacement);
  } catch {
    return { problem: `"${replacement}" is not a URL` };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { problem: `"${replacement}" is not an http(s) URL` };
  if (url.search || url.hash || url.username || url.password) {
    return { problem: `"${replacement}" is not an SMP base URL (it has a query, fragment or credentials)` };
  }
  return { url: url.href.replace(/\/+$/, '') };
}

/** What a NOERROR answer says about the name. */
function readNoError(name: string, message: DnsMessage): SmlLookup {
  const { target, ttls } = followAliases(message, name);
  const records: NaptrRecord[] = (message.answers ?? [])
    .filter(isNaptr)
    .filter((a) => sameName(a.name, target))
    .map((a) => ({ ...a.data, ttl: a.ttl ?? 0 }));
  if (records.length === 0)
    return { kind: 'not_registered', name, negative: 'nodata', negativeTtlSeconds: negativeTtl(message) };
  const candidates = records
    .filter(
      (r) => r.flags.toLowerCase() === 'u' && r.services.toLowerCase() === META_SMP_SERVICE.toLowerCase(),
    )
    .sort((a, b) => a.order - b.order || a.preference - b.preference);
  const problems: string[] = [];
  for (const record of candidates) {
    const found = smpUrlFromRegexp(record.regexp);
    if ('url' in found) {
      return {
        kind: 'registered',
        name,
        smpUrl: found.url,
        ttlSeconds: Math.min(record.ttl, ...ttls),
        record,
      };
    }
    problems.push(found.problem);
  }
  const ttlSeconds = Math.min(...records.map((r) => r.ttl), ...ttls);
  const problem =
    candidates.length === 0
      ? `no NAPTR record has flag U and service ${META_SMP_SERVICE} (found: ${records
          .map((r) => `"${r.flags}" "${r.services}"`)
          .join(', ')
          .slice(0, 200)})`
      : problems.join('; ').slice(0, 300);
  return { kind: 'registered_without_smp', name, ttlSeconds, records, problem };
}

export function createSmlClient(options: SmlClientOptions): SmlClient {
  const transport = options.transport ?? socketDnsTransport;
  const zone = options.zone.replace(/^\.+|\.+$/g, '').toLowerCase();

  async function ask(name: string, server: DnsServer, signal?: AbortSignal): Promise<SmlLookup> {
    const where = describeServer(server);
    const outcome = await transport({
      name,
      type: 'NAPTR',
      server,
      timeoutMs: options.timeoutMs,
      ...(signal ? { signal } : {}),
    });
    if (!outcome.ok) {
      const reason =
        outcome.kind === 'timeout' || outcome.kind === 'cancelled'
          ? 'timeout'
          : outcome.kind === 'bad_response'
            ? 'bad_response'
            : 'down';
      return {
        kind: 'unavailable',
        name,
        reason,
        detail: outcome.kind,
        retryable: true,
        message: `${where}: ${outcome.message}`,
      };
    }
    if (outcome.rcode === 'NXDOMAIN') {
      return {
        kind: 'not_registered',
        name,
        negative: 'nxdomain',
        negativeTtlSeconds: negativeTtl(outcome.message),
      };
    }
    if (outcome.rcode === 'NOERROR') return readNoError(name, outcome.message);
    return {
      kind: 'unavailable',
      name,
      reason: 'down',
      detail: outcome.rcode,
      retryable: true,
      message: `${where} answered ${outcome.rcode} for ${name}`,
    };
  }

  async function lookup(participantId: string, signal?: AbortSignal): Promise<SmlLookup> {
    const name = smlName(participantId, zone);
    const servers = options.servers && options.servers.length > 0 ? options.servers : systemDnsServers();
    if (servers.length === 0) {
      return {
        kind: 'unavailable',
        name,
        reason: 'down',
        detail: 'network',
        retryable: true,
        message: 'no DNS server is configured',
      };
    }
    const attempts = Math.max(1, options.attempts ?? Math.max(2, servers.length));
    let last: SmlLookup | undefined;
    for (let attempt = 0; attempt < attempts; attempt++) {
      last = await ask(name, servers[attempt % servers.length] as DnsServer, signal);
      if (last.kind !== 'unavailable' || signal?.aborted) return last;
    }
    return last as SmlLookup;
  }

  return { zone, lookup };
}
