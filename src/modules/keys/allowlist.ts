import { isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';

/** A range of addresses: its first address and prefix length. */
export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** An allowlist entry read: its range and the one way it is stored and shown, or why it is refused. */
export type EntryReading = { cidr: Cidr; canonical: string } | { problem: string };

const EXAMPLES = '(such as 203.0.113.7, 203.0.113.0/24, 2001:db8::1 or 2001:db8::/32)';
/** A prefix length in decimal without leading zeros. */
const PREFIX = /^(0|[1-9][0-9]{0,2})$/;

/** An IPv6 address as RFC 5952 writes it (an IPv4-mapped one with its IPv4 part dotted). */
function ipv6Text(address: ipaddr.IPv6): string {
  if (address.isIPv4MappedAddress()) return `::ffff:${address.toIPv4Address().toString()}`;
  return address.toRFC5952String();
}

/**
 * One address in a form that every reader takes alike, or null: IPv4 as four decimal numbers from 0
 * to 255 without leading zeros (never the octal, hexadecimal, shortened or single-number forms that
 * some parsers read as other addresses), IPv6 in any RFC 4291 form without a zone id.
 */
function strictAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (isIPv4(text)) return ipaddr.IPv4.parse(text);
  if (isIPv6(text) && !text.includes('%')) return ipaddr.IPv6.parse(text);
  return null;
}

function addressProblem(entry: string, address: string): string {
  if (address.includes('%'))
    return `"${entry}" has a zone id (${address.slice(address.indexOf('%'))}): write the address without it.`;
  if (/^[0-9a-fA-FxX.]+$/.test(address) && !address.includes(':'))
    return `"${entry}" is not an IPv4 address as written: four decimal numbers from 0 to 255 without leading zeros, such as 203.0.113.7 (leading zeros, octal, hexadecimal and shortened forms can be read as other addresses).`;
  return `"${entry}" is not an IPv4 or IPv6 address or CIDR ${EXAMPLES}.`;
}

/**
 * An allowlist entry as an operator writes it: one address or a CIDR range. Accepted only where
 * the text can mean one thing (see `strictAddress`; a prefix length in decimal, and no bits set
 * beyond it), and normalised: IPv4 as written, IPv6 compressed in lower case (RFC 5952).
 */
export function readAllowlistEntry(entry: string): EntryReading {
  const slash = entry.indexOf('/');
  const addressText = slash === -1 ? entry : entry.slice(0, slash);
  const address = strictAddress(addressText);
  if (address === null) return { problem: addressProblem(entry, addressText) };
  const bits = address.kind() === 'ipv4' ? 32 : 128;
  const text = address.kind() === 'ipv4' ? address.toString() : ipv6Text(address as ipaddr.IPv6);
  if (slash === -1) return { cidr: [address, bits], canonical: text };
  const prefixText = entry.slice(slash + 1);
  const prefix = Number(prefixText);
  if (!PREFIX.test(prefixText) || prefix > bits)
    return {
      problem: `"${entry}": the prefix length must be a whole number from 0 to ${bits}, without leading zeros.`,
    };
  const network =
    address.kind() === 'ipv4'
      ? ipaddr.IPv4.networkAddressFromCIDR(`${text}/${prefix}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${prefix}`);
  const networkText = network.kind() === 'ipv4' ? network.toString() : ipv6Text(network as ipaddr.IPv6);
  if (networkText !== text)
    return {
      problem: `"${entry}" has bits set beyond its /${prefix} prefix: write ${networkText}/${prefix} for the range, or ${text} for the one address.`,
    };
  return { cidr: [network, prefix], canonical: `${text}/${prefix}` };
}

/**
 * The ranges of a stored allowlist, and its entries that admit nothing. An entry is read as one that
 * an operator writes now, except that a CIDR with bits set beyond its prefix (accepted before they
 * were refused) counts as its range, as it always did. An entry that is not an address as written
 * (`192.168.001.010`, `127.1`, a zone id: accepted before and read by other rules) admits no address:
 * it never admits more than the operator wrote.
 */
export function readStoredAllowlist(entries: readonly string[]): { cidrs: Cidr[]; unusable: string[] } {
  const cidrs: Cidr[] = [];
  const unusable: string[] = [];
  for (const entry of entries) {
    const reading = readAllowlistEntry(entry);
    if ('cidr' in reading) {
      cidrs.push(reading.cidr);
      continue;
    }
    const slash = entry.indexOf('/');
    const address = slash === -1 ? null : strictAddress(entry.slice(0, slash));
    const prefixText = entry.slice(slash + 1);
    const bits = address?.kind() === 'ipv4' ? 32 : 128;
    if (address && PREFIX.test(prefixText) && Number(prefixText) <= bits)
      cidrs.push([address, Number(prefixText)]);
    else unusable.push(entry);
  }
  return { cidrs, unusable };
}

/** Whether `address` (as `request.ip` gives it) is inside one of the CIDRs. */
export function addressAllowed(address: string, cidrs: readonly Cidr[]): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address);
  } catch {
    return false;
  }
  for (const [range, bits] of cidrs) {
    if (parsed.kind() === range.kind() && parsed.match(range as never, bits)) return true;
    // An IPv4 range also takes the address in its IPv4-mapped IPv6 form, and the other way round.
    if (range.kind() === 'ipv6' && parsed.kind() === 'ipv4') {
      const mapped = (parsed as ipaddr.IPv4).toIPv4MappedAddress();
      if (mapped.match(range as ipaddr.IPv6, bits)) return true;
    }
  }
  return false;
}
