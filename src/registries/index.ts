/**
 * The upstream registry clients behind the port, built from configuration, and the routing of
 * VAT prefixes to registries (27 EU member states + XI → VIES, GB → HMRC, CH → BFS, NO → Brønnøysund).
 */
import { createBfsClient } from './bfs.js';
import { createBrregClient } from './brreg.js';
import { createHmrcClient } from './hmrc.js';
import type { FetchFn } from './http.js';
import type { RegistryClient, RegistrySource, RegistryStatusReader } from './port.js';
import { createViesClient } from './vies.js';
import { VIES_COUNTRIES } from './vies-common.js';
import { createViesStatusReader } from './vies-status.js';

export { createBfsClient } from './bfs.js';
export { createBrregClient } from './brreg.js';
export { createHmrcClient } from './hmrc.js';
export { createViesClient } from './vies.js';
export { VIES_COUNTRIES, VIES_ERROR_CODES } from './vies-common.js';
export { createViesSoapClient } from './vies-soap.js';
export { createViesStatusReader } from './vies-status.js';

export interface RegistryClientsConfig {
  vies: { baseUrl: string; soapUrl?: string; timeoutMs: number };
  hmrc: { baseUrl: string; clientId?: string; clientSecret?: string; timeoutMs: number };
  bfs: { baseUrl: string; timeoutMs: number };
  brreg: { baseUrl: string; timeoutMs: number };
  fetch?: FetchFn;
  now?: () => Date;
}

export interface RegistryClients {
  vies: RegistryClient;
  hmrc: RegistryClient;
  bfs: RegistryClient;
  brreg: RegistryClient;
  viesStatus: RegistryStatusReader;
  /** The client answering for a VAT prefix (`GR` is read as `EL`), or `null` when no registry covers it. */
  clientForPrefix(prefix: string): RegistryClient | null;
}

/** Which registry answers for a VAT prefix; `null` when none does (e.g. `SM`, `US`). */
export function sourceForPrefix(prefix: string): RegistrySource | null {
  const upper = prefix.trim().toUpperCase();
  const normalised = upper === 'GR' ? 'EL' : upper;
  if (VIES_COUNTRIES.includes(normalised)) return 'vies';
  if (normalised === 'GB') return 'hmrc';
  if (normalised === 'CH') return 'bfs';
  if (normalised === 'NO') return 'brreg';
  return null;
}

export function createRegistryClients(config: RegistryClientsConfig): RegistryClients {
  const shared = {
    ...(config.fetch ? { fetch: config.fetch } : {}),
    ...(config.now ? { now: config.now } : {}),
  };
  const clients = {
    vies: createViesClient({ ...config.vies, ...shared }),
    hmrc: createHmrcClient({ ...config.hmrc, ...shared }),
    bfs: createBfsClient({ ...config.bfs, ...shared }),
    brreg: createBrregClient({ ...config.brreg, ...shared }),
  };
  const viesStatus = createViesStatusReader({
    baseUrl: config.vies.baseUrl,
    timeoutMs: config.vies.timeoutMs,
    ...(config.fetch ? { fetch: config.fetch } : {}),
  });
  return {
    ...clients,
    viesStatus,
    clientForPrefix(prefix: string): RegistryClient | null {
      const source = sourceForPrefix(prefix);
      return source ? clients[source] : null;
    },
  };
}
