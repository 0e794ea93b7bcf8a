import { type Command, InvalidArgumentError } from 'commander';
import type { Config } from '../config.js';
import { isUuid } from '../lib/ids.js';
import { readAllowlistEntry } from '../modules/keys/allowlist.js';
import { SCOPES, type Scope } from '../modules/keys/index.js';
import { type AdminOperations, remoteAdmin } from './admin-api.js';
import { UsageError } from './usage-error.js';

// What `openvat accounts` and `openvat keys` share: where they work (the admin API of a service, or
// the database), and the parsers of their flags (checked before anything is sent, with the same
// rules as the API, so that a typo never leaves half of a command done, and a command on the
// database stores nothing the API would refuse).

/**
 * The admin API's limits on what the commands send (its schemas, `src/modules/admin/schemas.ts`);
 * the tests send each at the limit and over it, through the API and on the database.
 */
export const LIMITS = {
  name: 200,
  externalId: 200,
  metadataEntries: 50,
  metadataKey: 100,
  metadataValue: 1000,
  allowlistEntries: 100,
  search: 200,
  prefix: 32,
} as const;

/** `--url` / `--admin-key`, or `OPENVAT_ADMIN_URL` / `OPENVAT_ADMIN_KEY`. */
export interface TargetOptions {
  url?: string;
  adminKey?: string;
}

/** Adds `--url` and `--admin-key` to a command. */
export function withTarget(command: Command): Command {
  return command
    .option(
      '--url <url>',
      'work through the admin API of this service (default: OPENVAT_ADMIN_URL; without either, on DATABASE_URL)',
    )
    .option('--admin-key <key>', 'admin key (svc_admin_…) for --url (default: OPENVAT_ADMIN_KEY)');
}

/**
 * The admin API's operations of the command: over HTTP when a URL is given (flag or
 * OPENVAT_ADMIN_URL), else on DATABASE_URL, through the service functions the routes call.
 * OPENVAT_ADMIN_KEY alone changes nothing: on the server it is the service's own setting (an admin
 * key made at every start).
 */
export async function openAdmin(options: TargetOptions, config: () => Config): Promise<AdminOperations> {
  const url = options.url ?? nonEmpty(process.env.OPENVAT_ADMIN_URL);
  if (url === undefined) {
    if (options.adminKey !== undefined)
      throw new UsageError(
        '--admin-key needs --url (or OPENVAT_ADMIN_URL); without a URL the command works on DATABASE_URL',
      );
    const { localAdmin } = await import('./admin-local.js');
    return localAdmin(config());
  }
  const adminKey = options.adminKey ?? nonEmpty(process.env.OPENVAT_ADMIN_KEY);
  if (adminKey === undefined)
    throw new UsageError(
      `${options.url ? '--url' : 'OPENVAT_ADMIN_URL'} needs --admin-key or OPENVAT_ADMIN_KEY`,
    );
  return remoteAdmin({ url, adminKey });
}

/** Runs `run` with the admin API of `options`, closing it afterwards. */
export async function withAdmin<T>(
  options: TargetOptions,
  config: () => Config,
  run: (admin: AdminOperations) => Promise<T>,
): Promise<T> {
  const admin = await openAdmin(options, config);
  try {
    return await run(admin);
  } finally {
    await admin.close();
  }
}

/**
 * What a flag's word that removes a setting (`never`, `all`, `any`, `plan`, `none`) parses to: the
 * API's `null` (Commander turns a parser's `null` into an empty string).
 */
export const CLEAR = Symbol('clear');
export type Clear = typeof CLEAR;

/** A parsed flag's value for the API: `CLEAR` is `null`. */
export const apiValue = <T>(value: T | Clear): T | null => (value === CLEAR ? null : value);

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/** `a,b,c` as a list of trimmed, non-empty words. */
function list(value: string): string[] {
  return value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/** `--scopes validate,usage`; `all` = every operation its plan allows (CLEAR). */
export function parseScopes(value: string): Scope[] | Clear {
  if (value.trim() === 'all') return CLEAR;
  const scopes = list(value);
  if (scopes.length === 0)
    throw new InvalidArgumentError(`name one or more of ${SCOPES.join(', ')}, or all.`);
  for (const scope of scopes) {
    if (!(SCOPES as readonly string[]).includes(scope))
      throw new InvalidArgumentError(`"${scope}" is not a scope; scopes: ${SCOPES.join(', ')} (or all).`);
  }
  return [...new Set(scopes)] as Scope[];
}

/** `--ip-allowlist 203.0.113.0/24,2001:db8::/32`; `any` = every address (CLEAR). */
export function parseAllowlist(value: string): string[] | Clear {
  if (value.trim() === 'any') return CLEAR;
  const entries = list(value);
  if (entries.length === 0) throw new InvalidArgumentError('name one or more addresses or CIDRs, or any.');
  if (entries.length > LIMITS.allowlistEntries)
    throw new InvalidArgumentError(
      `at most ${LIMITS.allowlistEntries} addresses or CIDRs (got ${entries.length}).`,
    );
  for (const entry of entries) {
    const reading = readAllowlistEntry(entry);
    if ('problem' in reading) throw new InvalidArgumentError(reading.problem);
  }
  return entries;
}

/** `--expires-at 2027-12-31T00:00:00Z` (ISO 8601, in the future); `never` = no expiry (CLEAR). */
export function parseExpiresAt(value: string): string | Clear {
  if (value.trim() === 'never') return CLEAR;
  const at = Date.parse(value);
  if (!Number.isFinite(at))
    throw new InvalidArgumentError('not a date and time (ISO 8601, such as 2027-12-31T00:00:00Z), or never.');
  if (at <= Date.now()) throw new InvalidArgumentError(`${value} is in the past.`);
  return new Date(at).toISOString();
}

/** A whole number from `min` to `max`; `plan` = the plan's (CLEAR). */
export function wholeNumberOrPlan(min: number, max: number) {
  return (value: string): number | Clear => {
    if (value.trim() === 'plan') return CLEAR;
    const n = Number(value);
    if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`a whole number from ${min} to ${max}, or plan.`);
    return n;
  };
}

/** `--overlap-seconds`: 0 to 7 days. */
export function parseOverlap(value: string): number {
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || n > 7 * 86_400)
    throw new InvalidArgumentError('a whole number of seconds from 0 to 604800 (7 days).');
  return n;
}

/** `--metadata key=value`, repeatable: the pairs given, collected. */
export function collectMetadata(value: string, previous: Record<string, string> | undefined) {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('expected key=value.');
  const key = value.slice(0, at);
  const text = value.slice(at + 1);
  if (key.length > LIMITS.metadataKey)
    throw new InvalidArgumentError(`a key of at most ${LIMITS.metadataKey} characters (got ${key.length}).`);
  if (text.length > LIMITS.metadataValue)
    throw new InvalidArgumentError(
      `a value of at most ${LIMITS.metadataValue} characters (got ${text.length}).`,
    );
  const metadata = { ...previous, [key]: text };
  if (Object.keys(metadata).length > LIMITS.metadataEntries)
    throw new InvalidArgumentError(`at most ${LIMITS.metadataEntries} pairs.`);
  return metadata;
}

/** The filters given (a filter not given is not sent). */
export function defined<T extends object>(filter: T): T {
  return Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== undefined)) as T;
}

/**
 * An account's or key's id (a UUID, as `list` shows it), checked before anything is asked; written
 * in capitals it is the same id (ids are stored as `list` shows them, in small letters).
 */
export function parseId(value: string): string {
  if (!isUuid(value)) throw new InvalidArgumentError('not an id (a UUID, as list shows them).');
  return value.toLowerCase();
}

/** A text of at most `max` characters, the admin API's limit on the field; `notEmpty`: one at least. */
export function atMost(max: number, options: { notEmpty?: boolean } = {}): (value: string) => string {
  return (value) => {
    if (options.notEmpty && value === '') throw new InvalidArgumentError('must not be empty.');
    if (value.length > max)
      throw new InvalidArgumentError(`at most ${max} characters (got ${value.length}).`);
    return value;
  };
}
