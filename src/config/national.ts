/**
 * The national VAT registers asked when VIES cannot answer for their member state: which of them
 * (`OPENVAT_NATIONAL_FALLBACKS`), where each is (`PL_WHITELIST_URL`, `CZ_ADIS_URL`, `RO_ANAF_URL`,
 * `FI_PRH_URL`, `SK_OPENDATA_URL` with `SK_OPENDATA_KEY`, `SI_FURS_URL`, `LV_VID_URL`), how long a
 * call may take, and how the published files are kept.
 */
import { NATIONAL_SOURCES, type NationalSource } from '../lib/national-sources.js';
import { ConfigError, type Env, int, optional, str, url } from './readers.js';
import type { NationalConfig } from './types.js';

export type { NationalConfig };

/** Every register, in the order the setting lists them, with its accepted names. */
const NAMES: Readonly<Record<string, NationalSource>> = Object.freeze(
  Object.fromEntries(
    NATIONAL_SOURCES.flatMap((source) => [
      [source, source],
      [source.slice(0, 2), source],
    ]),
  ),
);

/** `OPENVAT_NATIONAL_FALLBACKS`: `all` (default), `none`, or a comma list (`pl,cz` or `pl_whitelist,…`). */
export function nationalFallbacks(env: Env, skKey: string | null): NationalSource[] {
  const raw = str(env, 'OPENVAT_NATIONAL_FALLBACKS', 'all').toLowerCase();
  if (raw === 'none' || raw === 'off') return [];
  // SK needs its key: "all configured" leaves it out without one.
  if (raw === 'all') return NATIONAL_SOURCES.filter((source) => source !== 'sk_financnasprava' || skKey);
  const chosen = new Set<NationalSource>();
  for (const word of raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const source = NAMES[word];
    if (!source) {
      throw new ConfigError(
        `OPENVAT_NATIONAL_FALLBACKS must be all, none or a list of ${NATIONAL_SOURCES.join(', ')} (or pl, cz, ro, fi, sk, si, lv), got "${word}"`,
      );
    }
    if (source === 'sk_financnasprava' && !skKey) {
      throw new ConfigError(
        'OPENVAT_NATIONAL_FALLBACKS names sk_financnasprava, which needs SK_OPENDATA_KEY',
      );
    }
    chosen.add(source);
  }
  return NATIONAL_SOURCES.filter((source) => chosen.has(source));
}

export function nationalConfig(env: Env): NationalConfig {
  const skKey = optional(env, 'SK_OPENDATA_KEY');
  const minRows = optional(env, 'OPENVAT_REGISTERS_MIN_ROWS');
  return {
    enabled: nationalFallbacks(env, skKey),
    plUrl: url(env, 'PL_WHITELIST_URL', 'https://wl-api.mf.gov.pl'),
    czUrl: url(
      env,
      'CZ_ADIS_URL',
      'https://adisrws.mfcr.cz/dpr/axis2/services/rozhraniCRPDPH.rozhraniCRPDPHSOAP',
    ),
    roUrl: url(env, 'RO_ANAF_URL', 'https://webservicesp.anaf.ro'),
    fiUrl: url(env, 'FI_PRH_URL', 'https://avoindata.prh.fi'),
    skUrl: url(env, 'SK_OPENDATA_URL', 'https://iz.opendata.financnasprava.sk'),
    skKey,
    siUrl: url(env, 'SI_FURS_URL', 'https://fu.gov.si/fileadmin/prenosi'),
    lvUrl: url(env, 'LV_VID_URL', 'https://data.gov.lv/dati/dataset/9a5eae1c-2438-48cf-854b-6a2c170f918f'),
    timeoutMs: int(env, 'OPENVAT_NATIONAL_TIMEOUT_MS', 5_000, 100, 120_000),
    syncEveryMs: int(env, 'OPENVAT_REGISTERS_SYNC_MS', 86_400_000, 0, 30 * 86_400_000),
    maxAgeDays: int(env, 'OPENVAT_REGISTERS_MAX_AGE_DAYS', 7, 1, 365),
    minRows: minRows === null ? null : int(env, 'OPENVAT_REGISTERS_MIN_ROWS', 0, 0, 100_000_000),
  };
}
