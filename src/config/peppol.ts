/**
 * The Peppol look-up's settings: the SML zone asked, the DNS servers asked, whether an SMP at a
 * private address (or over plain http) may be called, and the timeouts of a DNS query and of an
 * SMP request.
 */
import { type DnsServer, isDnsName, parseDnsServer } from '../lib/dns-names.js';
import { SML_ZONES } from '../lib/sml-zones.js';
import { bool, ConfigError, type Env, int, optional, str } from './readers.js';
import type { PeppolConfig } from './types.js';

export type { PeppolConfig };

function zone(env: Env): string {
  const value = str(env, 'PEPPOL_SML_ZONE', SML_ZONES.peppolProduction)
    .replace(/^\.+|\.+$/g, '')
    .toLowerCase();
  if (!isDnsName(value) || !/^[a-z0-9.-]+$/.test(value) || !value.includes('.')) {
    throw new ConfigError(
      `PEPPOL_SML_ZONE: "${value.slice(0, 80)}" is not a DNS zone (e.g. ${SML_ZONES.peppolProduction})`,
    );
  }
  return value;
}

function servers(env: Env): DnsServer[] | null {
  const raw = optional(env, 'PEPPOL_DNS_SERVERS');
  if (raw === null || raw === 'system') return null;
  return raw.split(',').map((part) => {
    const server = parseDnsServer(part);
    if (!server) {
      throw new ConfigError(
        `PEPPOL_DNS_SERVERS: "${part.trim().slice(0, 60)}" is not an IP address with an optional port (e.g. 192.0.2.53 or 127.0.0.1:5353 or [2001:db8::53]:53)`,
      );
    }
    return server;
  });
}

export function peppol(env: Env): PeppolConfig {
  return {
    smlZone: zone(env),
    dnsServers: servers(env),
    allowPrivateSmp: bool(env, 'PEPPOL_ALLOW_PRIVATE_SMP', false),
    dnsTimeoutMs: int(env, 'PEPPOL_DNS_TIMEOUT_MS', 2_000, 50, 60_000),
    smpTimeoutMs: int(env, 'PEPPOL_SMP_TIMEOUT_MS', 5_000, 100, 120_000),
  };
}
