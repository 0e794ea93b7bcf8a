/**
 * Reading the environment: the value readers every setting uses (strings, whole numbers, switches,
 * addresses) and the settings that need more than one (the proxy list, the admin listener, the
 * evidence key, client connections). `loadConfig` in src/config.ts puts them together.
 */
import { resolve } from 'node:path';
import ipaddr from 'ipaddr.js';
import { parseEvidenceKey } from '../lib/evidence-key.js';
import { weakness } from '../lib/secret-strength.js';
import type { Config, QuietWindow } from './types.js';

export type { QuietWindow } from './types.js';

/** `DE=21:00-00:30,FR=03:00-04:00`: prefixes with daily UTC windows. */
export function parseQuietWindows(name: string, raw: string): QuietWindow[] {
  if (raw.trim() === '' || raw.trim() === 'none') return [];
  return raw.split(',').map((part) => {
    const match = /^\s*([A-Z]{2,3})=(\d{2}):(\d{2})-(\d{2}):(\d{2})\s*$/.exec(part);
    const [h1, m1, h2, m2] = match ? match.slice(2).map(Number) : [];
    if (!match || h1 === undefined || m1 === undefined || h2 === undefined || m2 === undefined)
      throw new ConfigError(`${name}: expected PREFIX=HH:MM-HH:MM[,…], got "${part.trim()}"`);
    if (h1 > 23 || h2 > 24 || m1 > 59 || m2 > 59)
      throw new ConfigError(`${name}: "${part.trim()}" is not a time of day`);
    return { country: match[1] as string, start: h1 * 60 + m1, end: h2 * 60 + m2 };
  });
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export type Env = Record<string, string | undefined>;

export function str(env: Env, name: string, fallback: string): string {
  const value = env[name]?.trim();
  return value ? value : fallback;
}

/** A secret sent as `Authorization: Bearer <secret>`: one word, so a client can send it as it is. */
/**
 * A secret that clients send as a bearer token: one word, and strong enough not to be guessed
 * (`weakness`: at least 32 characters and an estimated 64 bits of randomness).
 */
export function bearerSecret(env: Env, name: string): string | null {
  const value = optional(env, name);
  if (value === null) return null;
  if (/\s/.test(value))
    throw new ConfigError(
      `${name} may not contain spaces: clients send it as "Authorization: Bearer <token>"`,
    );
  const weak = weakness(value);
  if (weak) throw new ConfigError(`${name} is ${weak}; make one with \`openssl rand -hex 32\``);
  return value;
}

/** The passwords of the example files (`CHANGE-ME`, `change-me-postgres`): never a real one. */
const PLACEHOLDER_PASSWORD = /^change[-_ ]?me/i;
/** A URL that gives a password, and gives it empty (`postgres://openvat:@db/openvat`). */
const EMPTY_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/?#@]*:@/i;

/**
 * Refuses a connection URL (`DATABASE_URL`, `REDIS_URL`) whose password is an example file's
 * placeholder, or empty where a password is given (an example's value left unset), so a copied
 * example never runs with a password anyone can read or with none.
 */
export function noPlaceholderPassword(name: string, value: string | null): void {
  if (value === null) return;
  if (EMPTY_PASSWORD.test(value))
    throw new ConfigError(`${name}: its password is empty; set the password (in .env for compose.yaml)`);
  let password: string;
  try {
    password = decodeURIComponent(new URL(value).password);
  } catch {
    return;
  }
  if (PLACEHOLDER_PASSWORD.test(password))
    throw new ConfigError(
      `${name}: its password is the placeholder of an example file (${password}); set a password of its own`,
    );
}

export function optional(env: Env, name: string): string | null {
  const value = env[name]?.trim();
  return value ? value : null;
}

export function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** A whole number, or null when the variable is not set. */
export function optionalInt(env: Env, name: string, min: number, max: number): number | null {
  return env[name]?.trim() ? int(env, name, 0, min, max) : null;
}

export const TRUE_WORDS = ['true', 'on', 'yes', '1'];
export const FALSE_WORDS = ['false', 'off', 'no', '0'];

export function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return fallback;
  if (TRUE_WORDS.includes(raw)) return true;
  if (FALSE_WORDS.includes(raw)) return false;
  throw new ConfigError(
    `${name} must be one of ${TRUE_WORDS.join(', ')} (enabled) or ${FALSE_WORDS.join(', ')} (disabled), got "${env[name]?.trim()}"`,
  );
}

/** pino's levels, and `silent`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function logLevel(env: Env): string {
  const value = str(env, 'LOG_LEVEL', 'info');
  if (!(LOG_LEVELS as readonly string[]).includes(value))
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${value}"`);
  return value;
}

export function url(env: Env, name: string, fallback: string): string {
  const value = str(env, name, fallback).replace(/\/+$/, '');
  try {
    const parsed = new URL(value);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${value}"`);
  }
  return value;
}

export function overridesPath(env: Env): string | null {
  const value = optional(env, 'OPENVAT_RATES_OVERRIDES');
  return value ? resolve(value) : null;
}

/** `OPENVAT_TEDB_URL`: an http(s) address (kept as written, a trailing slash included) or `off`. */
export function tedbUrl(env: Env): string | null {
  const value = str(env, 'OPENVAT_TEDB_URL', 'https://ec.europa.eu/taxation_customs/tedb/ws/');
  if (value === 'off') return null;
  try {
    const parsed = new URL(value);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
  } catch {
    throw new ConfigError(`OPENVAT_TEDB_URL must be an http(s) URL or off, got "${value}"`);
  }
  return value;
}

/** `DATABASE_URL` when it is not set: a SQLite file under `./data/`, created with its directory. */
export const DEFAULT_DATABASE_URL = 'sqlite:./data/openvat.sqlite';

export function databaseUrl(env: Env): string {
  const value = str(env, 'DATABASE_URL', DEFAULT_DATABASE_URL);
  if (value.startsWith('sqlite:') || value.startsWith('postgres://') || value.startsWith('postgresql://')) {
    return value;
  }
  throw new ConfigError(`DATABASE_URL must start with sqlite: or postgres://, got "${value}"`);
}

/** proxy-addr's names of address ranges. */
export const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * `OPENVAT_TRUST_PROXY`: a comma-separated list of the proxies' addresses and ranges, or the number
 * of proxies every request passes through (`1`: the connection's peer is a proxy and the last
 * address it appended to `X-Forwarded-For` is the client), or off.
 */
export function trustProxy(env: Env): readonly string[] | number {
  const name = 'OPENVAT_TRUST_PROXY';
  const raw = env[name]?.trim() ?? '';
  if (raw === '' || ['off', 'false', 'no', 'none', '0'].includes(raw.toLowerCase())) return [];
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops > 10) throw new ConfigError(`${name}: a hop count must be between 1 and 10, got ${raw}`);
    return hops;
  }
  if (['true', 'on', 'yes', 'all', '*'].includes(raw.toLowerCase())) {
    throw new ConfigError(
      `${name} must list the proxies' addresses or ranges (e.g. 10.0.0.0/8 or uniquelocal) or give their number, got "${raw}": trusting every address would let any client choose its own`,
    );
  }
  return raw.split(',').map((part) => {
    const entry = part.trim();
    const valid =
      PROXY_RANGE_NAMES.includes(entry) ||
      ipaddr.IPv4.isValidFourPartDecimal(entry) ||
      ipaddr.IPv6.isValid(entry) ||
      ipaddr.IPv4.isValidCIDRFourPartDecimal(entry) ||
      ipaddr.IPv6.isValidCIDR(entry);
    if (!valid)
      throw new ConfigError(
        `${name}: "${entry}" is not an IP address, a CIDR range (10.0.0.0/8, fd00::/8) or one of ${PROXY_RANGE_NAMES.join(', ')}`,
      );
    return entry;
  });
}

export function redisPrefix(env: Env): string {
  const value = str(env, 'OPENVAT_REDIS_PREFIX', 'openvat:');
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(value))
    throw new ConfigError(
      `OPENVAT_REDIS_PREFIX may hold letters, digits and ": _ . -" (at most 64), got "${value}"`,
    );
  return value;
}

export const DAY = 86_400;

export function admin(env: Env): Config['admin'] {
  const key = optional(env, 'OPENVAT_ADMIN_KEY');
  if (key !== null && !/^svc_admin_[0-9A-Za-z]{32}$/.test(key))
    throw new ConfigError('OPENVAT_ADMIN_KEY must be svc_admin_ followed by 32 letters and digits');
  const weak = key === null ? null : weakness(key.slice('svc_admin_'.length));
  if (weak)
    throw new ConfigError(
      `OPENVAT_ADMIN_KEY: the 32 letters and digits after svc_admin_ are ${weak}; use a key made by \`openvat admin-keys create\`, or 32 random ones`,
    );
  const port = optional(env, 'OPENVAT_ADMIN_PORT');
  return {
    key,
    listener:
      port === null
        ? null
        : {
            host: str(env, 'OPENVAT_ADMIN_HOST', '127.0.0.1'),
            port: int(env, 'OPENVAT_ADMIN_PORT', 0, 0, 65_535),
          },
    // The audit log is kept at least a year.
    auditRetentionDays: int(env, 'OPENVAT_ADMIN_AUDIT_RETENTION_DAYS', 400, 365, 36_500),
  };
}

export function evidenceKey(env: Env): string | null {
  const raw = optional(env, 'OPENVAT_EVIDENCE_KEY');
  if (raw === null) return null;
  try {
    parseEvidenceKey(raw);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  return raw;
}

export function connections(env: Env): Config['connections'] {
  const requestTimeoutMs = int(env, 'OPENVAT_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000);
  const headersTimeoutMs = int(
    env,
    'OPENVAT_HEADERS_TIMEOUT_MS',
    Math.min(10_000, requestTimeoutMs),
    100,
    3_600_000,
  );
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      `OPENVAT_HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed OPENVAT_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`,
    );
  }
  return {
    requestTimeoutMs,
    headersTimeoutMs,
    // Longer than the 60 s idle timeout of common load balancers, as Fastify's own default (72 s).
    keepAliveTimeoutMs: int(env, 'OPENVAT_KEEP_ALIVE_TIMEOUT_MS', 72_000, 0, 3_600_000),
    idleTimeoutMs: int(env, 'OPENVAT_IDLE_TIMEOUT_MS', 120_000, 0, 3_600_000),
    maxRequestsPerSocket: int(env, 'OPENVAT_MAX_REQUESTS_PER_SOCKET', 0, 0, 100_000_000),
    maxConnections: int(env, 'OPENVAT_MAX_CONNECTIONS', 10_000, 0, 1_000_000),
  };
}

/**
 * `OPENVAT_TSA_URLS`: RFC 3161 time-stamping authorities, comma-separated http(s) URLs tried in
 * order; absent or empty: no trusted timestamps.
 */
export function tsaUrls(env: Env): string[] {
  const value = optional(env, 'OPENVAT_TSA_URLS');
  if (!value) return [];
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      try {
        const parsed = new URL(part);
        if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
      } catch {
        throw new ConfigError(`OPENVAT_TSA_URLS must list http(s) URLs separated by commas, got "${part}"`);
      }
      return part;
    });
}

const DURATION_UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration such as `90s`, `15m`, `1h` or `1d` (a bare number is seconds), in milliseconds, at
 * least `minMs`.
 */
export function duration(env: Env, name: string, fallbackMs: number, minMs: number, maxMs: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallbackMs;
  const match = /^(\d+)\s*([smhd]?)$/.exec(raw);
  if (!match) throw new ConfigError(`${name} must be a duration such as 90s, 15m, 1h or 1d, got "${raw}"`);
  const ms = Number(match[1]) * (DURATION_UNITS[match[2] || 's'] ?? 1_000);
  if (ms < minMs || ms > maxMs)
    throw new ConfigError(
      `${name} must be between ${minMs / 1_000} seconds and ${maxMs / 86_400_000} days, got "${raw}"`,
    );
  return ms;
}
