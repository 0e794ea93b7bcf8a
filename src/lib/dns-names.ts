/**
 * DNS names and server addresses as the settings and the DNS client read them: pure functions, so
 * the configuration can check a setting without loading the client.
 */
import { isIP } from 'node:net';

/** A DNS server: an IP address and a port. */
export interface DnsServer {
  host: string;
  port: number;
}

/**
 * `host[:port]` as a DNS server: an IPv4 address with an optional port, an IPv6 address alone or in
 * brackets with an optional port (`[::1]:5353`). Null for anything else (host names included: a
 * resolver is given by address).
 */
export function parseDnsServer(text: string): DnsServer | null {
  const trimmed = text.trim();
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(trimmed);
  let host: string;
  let port = '53';
  if (bracketed) {
    host = bracketed[1] as string;
    if (bracketed[2]) port = bracketed[2];
    if (isIP(host) !== 6) return null;
  } else if (isIP(trimmed) === 6) {
    host = trimmed;
  } else {
    const v4 = /^([^:]+)(?::(\d{1,5}))?$/.exec(trimmed);
    if (!v4 || isIP(v4[1] as string) !== 4) return null;
    host = v4[1] as string;
    if (v4[2]) port = v4[2];
  }
  const number = Number(port);
  if (!Number.isInteger(number) || number < 1 || number > 65_535) return null;
  return { host, port: number };
}

export function describeServer(server: DnsServer): string {
  return server.host.includes(':') ? `[${server.host}]:${server.port}` : `${server.host}:${server.port}`;
}

/** Whether DNS can carry the name: labels of 1 to 63 bytes, 253 characters in all (RFC 1035 §2.3.4). */
export function isDnsName(name: string): boolean {
  const bare = name.replace(/\.$/, '');
  if (bare.length === 0 || Buffer.byteLength(bare) > 253) return false;
  return bare.split('.').every((label) => label.length > 0 && Buffer.byteLength(label) <= 63);
}
