import { promises as dnsPromises, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Port for name resolution: every address a host name resolves to. */
export interface DnsResolver {
  lookupAll(hostname: string): Promise<LookupAddress[]>;
}

/** The system resolver (`dns.lookup`, the same one outbound connections would use). */
export const systemDns: DnsResolver = {
  lookupAll: (hostname) => dnsPromises.lookup(hostname, { all: true, verbatim: true }),
};

export const MAX_URL_LENGTH = 2048;

/**
 * Whether an address is a public unicast address. Loopback, private, link-local (with the cloud
 * metadata address 169.254.169.254), carrier-grade NAT, unique-local, unspecified, multicast,
 * broadcast, reserved and documentation ranges, and translation prefixes (6to4, NAT64, Teredo) are
 * not. IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`) are judged as the IPv4 address they carry;
 * IPv4-compatible ones (`::/96`, deprecated by RFC 4291, e.g. `::7f00:1`) are never public: some
 * stacks still route them to the IPv4 address in their low 32 bits.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(hexTail(address));
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
    else if (v6.parts.slice(0, 6).every((part) => part === 0)) return false;
  }
  return parsed.range() === 'unicast';
}

/**
 * An IPv6 address with a dotted IPv4 tail (`::127.0.0.1`) rewritten with hex groups (`::7f00:1`), as
 * the URL parser and the socket see it: ipaddr.js reads `::a.b.c.d` as IPv4-mapped (`::ffff:a.b.c.d`).
 */
function hexTail(address: string): string {
  const tail = /^(.*:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(address);
  if (!tail?.[1] || !tail[2] || !ipaddr.IPv4.isValidFourPartDecimal(tail[2])) return address;
  const [a, b, c, d] = ipaddr.IPv4.parse(tail[2]).octets as [number, number, number, number];
  return `${tail[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

export type UrlCheck = { ok: true; url: URL; hostname: string } | { ok: false; reason: string };

/** The host of a URL without IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** Characters that are never part of a URL (RFC 3986); a lenient parser would encode them silently. */
const STRAY = new Set(['"', '<', '>', '\\', '^', '`', '{', '|', '}']);

/**
 * The first character of `raw` that may not appear in a URL unencoded, described, or `null`. Such a
 * URL would be stored as given but called as the parser rewrote it; it is refused instead, so the
 * URL an endpoint shows is the one it is called at. Non-ASCII characters (internationalised names)
 * are left to the parser.
 */
function strayCharacter(raw: string): string | null {
  for (const ch of raw) {
    const code = ch.codePointAt(0) as number;
    if (code <= 0x20 || code === 0x7f) return code === 0x20 ? 'a space' : 'a control character';
    if (STRAY.has(ch)) return `"${ch}"`;
  }
  return null;
}

/** Syntax rules of a webhook URL: absolute, `https:` (or `http:` when private targets are allowed), no credentials, not port 0. */
export function checkUrlSyntax(raw: string, allowPrivate: boolean): UrlCheck {
  if (raw.length > MAX_URL_LENGTH) {
    return { ok: false, reason: `The URL is longer than ${MAX_URL_LENGTH} characters.` };
  }
  const stray = strayCharacter(raw);
  if (stray !== null) {
    return {
      ok: false,
      reason: `The URL contains ${stray}, which a URL cannot hold as is: percent-encode it.`,
    };
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'The URL is not a valid absolute URL.' };
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    return { ok: false, reason: 'The URL must use https://.' };
  }
  if (url.username || url.password) {
    return { ok: false, reason: 'The URL must not contain a user name or password.' };
  }
  // Port 0 names no port a server can listen on (`URL` keeps it; an empty port is the scheme's default).
  if (url.port === '0') return { ok: false, reason: 'The URL has port 0, which no server listens on.' };
  const hostname = bareHost(url);
  if (!hostname) return { ok: false, reason: 'The URL has no host.' };
  return { ok: true, url, hostname };
}

/**
 * Full registration check: syntax, then every address the host resolves to must be public (unless
 * private targets are allowed). The same check runs again at connect time on every attempt.
 */
export async function checkWebhookUrl(
  raw: string,
  options: { allowPrivate: boolean; dns: DnsResolver },
): Promise<UrlCheck> {
  const syntax = checkUrlSyntax(raw, options.allowPrivate);
  if (!syntax.ok) return syntax;
  const refusal = await checkHost(syntax.hostname, options);
  return refusal ? { ok: false, reason: refusal } : syntax;
}

/** A reason to refuse the host, or null when every address it resolves to may be contacted. */
export async function checkHost(
  hostname: string,
  options: { allowPrivate: boolean; dns: DnsResolver },
): Promise<string | null> {
  let addresses: string[];
  if (isIP(hostname)) {
    addresses = [hostname];
  } else {
    try {
      addresses = (await options.dns.lookupAll(hostname)).map((a) => a.address);
    } catch {
      return `The host "${hostname}" could not be resolved.`;
    }
    if (addresses.length === 0) return `The host "${hostname}" could not be resolved.`;
  }
  if (options.allowPrivate) return null;
  // The refusal does not say what the name resolved to: that would map internal names for anyone.
  if (addresses.every(isPublicAddress)) return null;
  return isIP(hostname)
    ? `The host "${hostname}" is not a public address.`
    : `The host "${hostname}" does not resolve to public addresses only: webhooks are sent to publicly reachable hosts only.`;
}

/** The error a guarded lookup fails with; no connection is opened. */
export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
  readonly code = 'EWEBHOOKBLOCKED';
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for `http.request` that resolves through the DNS port and refuses non-public answers,
 * so the address the socket connects to is exactly the address that was checked (no DNS rebinding
 * window between check and connect).
 */
export function guardedLookup(options: { allowPrivate: boolean; dns: DnsResolver }) {
  return (hostname: string, lookupOptions: { all?: boolean }, callback: LookupCallback): void => {
    options.dns.lookupAll(hostname).then(
      (addresses) => {
        if (addresses.length === 0) {
          callback(Object.assign(new Error(`${hostname} did not resolve`), { code: 'ENOTFOUND' }), '');
          return;
        }
        if (!options.allowPrivate) {
          const blocked = addresses.find((a) => !isPublicAddress(a.address));
          if (blocked) {
            callback(new BlockedAddressError(`${hostname} is not a public address`), '');
            return;
          }
        }
        if (lookupOptions.all) callback(null, addresses);
        else callback(null, addresses[0]?.address ?? '', addresses[0]?.family ?? 4);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}
