/**
 * The registries' addresses and how they are asked (timeouts, concurrency, retries, breakers, the
 * VIES status poll), and how long their answers are cached.
 */
import { DAY, type Env, int, optional, url } from './readers.js';
import type { Config } from './types.js';

export function registries(env: Env): Config['registries'] {
  return {
    viesUrl: url(env, 'VIES_URL', 'https://ec.europa.eu/taxation_customs/vies/rest-api'),
    viesSoapUrl: url(
      env,
      'VIES_SOAP_URL',
      'https://ec.europa.eu/taxation_customs/vies/services/checkVatService',
    ),
    hmrcUrl: url(env, 'HMRC_URL', 'https://api.service.hmrc.gov.uk'),
    hmrcClientId: optional(env, 'HMRC_CLIENT_ID'),
    hmrcClientSecret: optional(env, 'HMRC_CLIENT_SECRET'),
    bfsUrl: url(env, 'BFS_URL', 'https://www.uid-wse.admin.ch/V5.0/PublicServices.svc'),
    brregUrl: url(env, 'BRREG_URL', 'https://data.brreg.no'),
    evatrUrl: url(env, 'EVATR_URL', 'https://api.evatr.vies.bzst.de/app'),
    eosUrl: url(
      env,
      'EOS_URL',
      'https://ec.europa.eu/taxation_customs/dds2/eos/validation/services/validation',
    ),
    timeoutMs: int(env, 'OPENVAT_REGISTRY_TIMEOUT_MS', 10_000, 100, 120_000),
    concurrencyPerCountry: int(env, 'OPENVAT_REGISTRY_CONCURRENCY', 2, 1, 1_000),
    deadlineMs: int(env, 'OPENVAT_REGISTRY_DEADLINE_MS', 8_000, 0, 600_000),
    permitWaitMs: int(env, 'OPENVAT_REGISTRY_PERMIT_WAIT_MS', 5_000, 0, 600_000),
    backoffMs: int(env, 'OPENVAT_REGISTRY_BACKOFF_MS', 100, 1, 60_000),
    breakerThreshold: int(env, 'OPENVAT_BREAKER_THRESHOLD', 5, 1, 1_000),
    breakerOpenMs: int(env, 'OPENVAT_BREAKER_OPEN_MS', 30_000, 100, 3_600_000),
    statusPollMs: int(env, 'OPENVAT_STATUS_POLL_MS', 300_000, 0, 86_400_000),
  };
}

export function cache(env: Env): Config['cache'] {
  return {
    validTtlSeconds: int(env, 'OPENVAT_CACHE_VALID_TTL', 30 * DAY, 0, 3_650 * DAY),
    invalidTtlSeconds: int(env, 'OPENVAT_CACHE_INVALID_TTL', DAY, 0, 3_650 * DAY),
    degradedWindowSeconds: int(env, 'OPENVAT_DEGRADED_WINDOW', 7 * DAY, 0, 3_650 * DAY),
  };
}
