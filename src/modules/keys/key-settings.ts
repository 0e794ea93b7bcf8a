import { type Refusal, refusal } from '../../lib/refusal.js';
import { readAllowlistEntry } from './allowlist.js';
import type { Scope } from './policy.js';
import type { ApiKeyRow } from './repository.js';

/** The settings of a key an operator may set (`undefined`: not given). */
export interface KeySettings {
  name?: string | null;
  default_requester_vat?: string | null;
  expires_at?: string | null;
  scopes?: Scope[] | null;
  ip_allowlist?: string[] | null;
  rate_limit_per_minute?: number | null;
  monthly_quota?: number | null;
  metadata?: Record<string, string>;
}

/** Whether settings can be stored: `ok`, or the refusal naming the field that cannot. */
export function checkSettings(settings: KeySettings, now: number): { kind: 'ok' } | Refusal {
  if (settings.expires_at !== undefined && settings.expires_at !== null) {
    const at = Date.parse(settings.expires_at);
    if (!Number.isFinite(at))
      return refusal('invalid_format', 'expires_at must be a date and time (ISO 8601).', {
        field: 'expires_at',
      });
    if (at <= now)
      return refusal('invalid_format', `expires_at (${settings.expires_at}) is in the past.`, {
        field: 'expires_at',
      });
  }
  for (const entry of settings.ip_allowlist ?? []) {
    const reading = readAllowlistEntry(entry);
    if ('problem' in reading)
      return refusal('invalid_format', `ip_allowlist: ${reading.problem}`, { field: 'ip_allowlist' });
  }
  return { kind: 'ok' };
}

/** An allowlist as stored: each entry in its one written form (see `readAllowlistEntry`), once. */
function canonicalAllowlist(entries: readonly string[]): string[] {
  const canonical = entries.map((entry) => {
    const reading = readAllowlistEntry(entry);
    if ('problem' in reading) throw new Error(`unchecked allowlist entry: ${reading.problem}`);
    return reading.canonical;
  });
  return [...new Set(canonical)];
}

/** The columns of settings that `checkSettings` accepted (only those given). */
export function settingColumns(settings: KeySettings) {
  const columns: Partial<ApiKeyRow> = {};
  if (settings.name !== undefined) columns.name = settings.name;
  if (settings.default_requester_vat !== undefined)
    columns.default_requester_vat = settings.default_requester_vat;
  if (settings.expires_at !== undefined)
    columns.expires_at = settings.expires_at === null ? null : new Date(settings.expires_at).toISOString();
  if (settings.scopes !== undefined)
    columns.scopes = settings.scopes === null ? null : JSON.stringify([...new Set(settings.scopes)]);
  if (settings.ip_allowlist !== undefined)
    columns.ip_allowlist =
      settings.ip_allowlist === null ? null : JSON.stringify(canonicalAllowlist(settings.ip_allowlist));
  if (settings.rate_limit_per_minute !== undefined)
    columns.rate_limit_per_minute = settings.rate_limit_per_minute;
  if (settings.monthly_quota !== undefined) columns.monthly_quota = settings.monthly_quota;
  if (settings.metadata !== undefined) columns.metadata = JSON.stringify(settings.metadata);
  return columns;
}
