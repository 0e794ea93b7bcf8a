/**
 * The national register clients built from configuration: one per configured register, found by
 * the VAT prefix of the state it answers for. A register without a configured endpoint is absent,
 * so a state whose register is not configured simply has no fallback.
 */
import { createCzAdisClient } from './cz-adis.js';
import { createFiPrhClient } from './fi-prh.js';
import type { FetchFn } from './http.js';
import { createLvVidClient } from './lv-vid.js';
import type { NationalFileIndex } from './national-file.js';
import { NATIONAL_COUNTRY, type NationalRegistryClient, type NationalSource } from './national-port.js';
import { createPlWhitelistClient } from './pl-whitelist.js';
import { createRoAnafClient } from './ro-anaf.js';
import { createSiFursClient } from './si-furs.js';
import { createSkFinancnaSpravaClient } from './sk-financnasprava.js';

export { CZ_ADIS_LIMITS, createCzAdisClient } from './cz-adis.js';
export { createFiPrhClient, FI_PRH_LIMITS } from './fi-prh.js';
export { createLvVidClient, LV_VID_FILES, LV_VID_LIMITS } from './lv-vid.js';
export { createPlWhitelistClient, PL_WHITELIST_LIMITS } from './pl-whitelist.js';
export { createRoAnafClient, RO_ANAF_LIMITS } from './ro-anaf.js';
export { createSiFursClient, SI_FURS_FILES, SI_FURS_LIMITS } from './si-furs.js';
export { createSkFinancnaSpravaClient, SK_FINANCNASPRAVA_LIMITS } from './sk-financnasprava.js';

export interface NationalClientsConfig {
  /** `PL_WHITELIST_URL`: the API base, e.g. `https://wl-api.mf.gov.pl`. */
  pl?: { baseUrl: string; timeoutMs: number };
  /** `CZ_ADIS_URL`: the full SOAP endpoint. */
  cz?: { url: string; timeoutMs: number };
  /** `RO_ANAF_URL`: the service base, e.g. `https://webservicesp.anaf.ro`. */
  ro?: { baseUrl: string; timeoutMs: number };
  /** `FI_PRH_URL`: the API host, e.g. `https://avoindata.prh.fi`. */
  fi?: { baseUrl: string; timeoutMs: number };
  /** `SK_OPENDATA_URL` with `SK_OPENDATA_KEY`: the API host, e.g. `https://iz.opendata.financnasprava.sk`. */
  sk?: { baseUrl: string; apiKey: string; timeoutMs: number };
  /** `SI_FURS_URL`: answered from the local copy of its files in `index` (synced apart). */
  si?: { index: NationalFileIndex; maxAgeDays?: number };
  /** `LV_VID_URL`: answered from the local copy of its file in `index` (synced apart). */
  lv?: { index: NationalFileIndex; maxAgeDays?: number };
  fetch?: FetchFn;
  now?: () => Date;
}

export interface NationalClients {
  readonly bySource: Partial<Record<NationalSource, NationalRegistryClient>>;
  /** The register answering for a VAT prefix (`PL`, `CZ`, …), or `null` when none is configured. */
  forCountry(prefix: string): NationalRegistryClient | null;
}

export function createNationalClients(config: NationalClientsConfig): NationalClients {
  const shared = {
    ...(config.fetch ? { fetch: config.fetch } : {}),
    ...(config.now ? { now: config.now } : {}),
  };
  const bySource: Partial<Record<NationalSource, NationalRegistryClient>> = {};
  if (config.pl) bySource.pl_whitelist = createPlWhitelistClient({ ...config.pl, ...shared });
  if (config.cz) bySource.cz_adis = createCzAdisClient({ ...config.cz, ...shared });
  if (config.ro) bySource.ro_anaf = createRoAnafClient({ ...config.ro, ...shared });
  if (config.fi) bySource.fi_prh = createFiPrhClient({ ...config.fi, ...shared });
  if (config.sk) bySource.sk_financnasprava = createSkFinancnaSpravaClient({ ...config.sk, ...shared });
  const clock = config.now ? { now: config.now } : {};
  if (config.si) bySource.si_furs = createSiFursClient({ ...config.si, ...clock });
  if (config.lv) bySource.lv_vid = createLvVidClient({ ...config.lv, ...clock });
  const byCountry = new Map(
    Object.values(bySource).map((client) => [NATIONAL_COUNTRY[client.source], client] as const),
  );
  return {
    bySource,
    forCountry: (prefix) => byCountry.get(prefix.trim().toUpperCase()) ?? null,
  };
}
