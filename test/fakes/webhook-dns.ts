import { isIP } from 'node:net';
import type { DnsResolver } from '../../src/modules/webhooks/url-guard.js';

/** A resolver answering from a table that tests can change; unknown names fail like ENOTFOUND. */
export function createFakeDns(table: Record<string, string | string[]> = {}): DnsResolver & {
  set(hostname: string, addresses: string | string[]): void;
  lookups: string[];
} {
  const entries = new Map<string, string[]>();
  const lookups: string[] = [];
  const set = (hostname: string, addresses: string | string[]) => {
    entries.set(hostname.toLowerCase(), Array.isArray(addresses) ? addresses : [addresses]);
  };
  for (const [hostname, addresses] of Object.entries(table)) set(hostname, addresses);
  return {
    set,
    lookups,
    async lookupAll(hostname) {
      lookups.push(hostname);
      const found = entries.get(hostname.toLowerCase());
      if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return found.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 }));
    },
  };
}
