import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nationalConfig } from './config/national.js';
import { peppol } from './config/peppol.js';
import {
  admin,
  bearerSecret,
  bool,
  ConfigError,
  connections,
  DAY,
  databaseUrl,
  type Env,
  evidenceKey,
  int,
  logLevel,
  noPlaceholderPassword,
  optional,
  optionalInt,
  overridesPath,
  parseQuietWindows,
  redisPrefix,
  str,
  tedbUrl,
  trustProxy,
  url,
} from './config/readers.js';
import { timestamps } from './config/timestamps.js';
import type { Config } from './config/types.js';

export {
  ConfigError,
  DEFAULT_DATABASE_URL,
  parseQuietWindows,
} from './config/readers.js';
export type { Config, QuietWindow } from './config/types.js';

/** The package root (one level above `src/` or `dist/`). */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Parses the environment once into a frozen, typed configuration. Fails fast with a clear message. */
export function loadConfig(env: Env = process.env): Config {
  const config: Config = {
    host: str(env, 'HOST', '127.0.0.1'),
    port: int(env, 'PORT', 8080, 0, 65_535),
    databaseUrl: databaseUrl(env),
    postgres: {
      poolSize: int(env, 'OPENVAT_PG_POOL_SIZE', 10, 1, 1_000),
      statementTimeoutMs: int(env, 'OPENVAT_PG_STATEMENT_TIMEOUT_MS', 0, 0, 86_400_000),
    },
    trustProxy: trustProxy(env),
    redisUrl: optional(env, 'REDIS_URL'),
    redisPrefix: redisPrefix(env),
    permitLeaseMs: int(env, 'OPENVAT_PERMIT_LEASE_MS', 5_000, 300, 600_000),
    logLevel: logLevel(env),
    ratesPath: resolve(str(env, 'OPENVAT_RATES_PATH', resolve(PACKAGE_ROOT, 'data/rates.json'))),
    ratesOverridesPath: overridesPath(env),
    tedbUrl: tedbUrl(env),
    bodyLimit: int(env, 'OPENVAT_BODY_LIMIT', 1_048_576, 1_024, 64 * 1_048_576),
    connections: connections(env),
    playground: bool(env, 'OPENVAT_PLAYGROUND', true),
    metricsToken: bearerSecret(env, 'OPENVAT_METRICS_TOKEN'),
    publicRateLimitPerMinute: int(env, 'OPENVAT_PUBLIC_RATE_LIMIT', 600, 1, 100_000_000),
    keyCacheMs: int(env, 'OPENVAT_KEY_CACHE_MS', 5_000, 0, 300_000),
    authFailuresPerMinute: int(env, 'OPENVAT_AUTH_FAILURES_PER_MINUTE', 60, 1, 100_000_000),
    admin: admin(env),
    keyRateLimitPerMinute: {
      free: int(env, 'OPENVAT_RATE_LIMIT_FREE', 60, 1, 100_000_000),
      starter: int(env, 'OPENVAT_RATE_LIMIT_STARTER', 600, 1, 100_000_000),
      pro: int(env, 'OPENVAT_RATE_LIMIT_PRO', 3_000, 1, 100_000_000),
      business: int(env, 'OPENVAT_RATE_LIMIT_BUSINESS', 12_000, 1, 100_000_000),
    },
    keyMonthlyQuota: {
      free: optionalInt(env, 'OPENVAT_MONTHLY_QUOTA_FREE', 0, 1_000_000_000_000),
      starter: optionalInt(env, 'OPENVAT_MONTHLY_QUOTA_STARTER', 0, 1_000_000_000_000),
      pro: optionalInt(env, 'OPENVAT_MONTHLY_QUOTA_PRO', 0, 1_000_000_000_000),
      business: optionalInt(env, 'OPENVAT_MONTHLY_QUOTA_BUSINESS', 0, 1_000_000_000_000),
    },
    registries: {
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
    },
    national: nationalConfig(env),
    cache: {
      validTtlSeconds: int(env, 'OPENVAT_CACHE_VALID_TTL', 30 * DAY, 0, 3_650 * DAY),
      invalidTtlSeconds: int(env, 'OPENVAT_CACHE_INVALID_TTL', DAY, 0, 3_650 * DAY),
      degradedWindowSeconds: int(env, 'OPENVAT_DEGRADED_WINDOW', 7 * DAY, 0, 3_650 * DAY),
    },
    evidenceKey: evidenceKey(env),
    timestamps: timestamps(env),
    confirmations: {
      burst: int(env, 'OPENVAT_CONFIRM_BURST', 10, 1, 100_000),
      burstWindowSeconds: int(env, 'OPENVAT_CONFIRM_BURST_WINDOW', 10, 1, 86_400),
    },
    peppol: peppol(env),
    webhooks: {
      allowPrivate: bool(env, 'OPENVAT_WEBHOOKS_ALLOW_PRIVATE', false),
      backoffMs: int(env, 'OPENVAT_WEBHOOK_BACKOFF_MS', 30_000, 1, 86_400_000),
    },
    batch: {
      concurrency: int(env, 'OPENVAT_BATCH_CONCURRENCY', 256, 1, 10_000),
      leaseMs: int(env, 'OPENVAT_BATCH_LEASE_MS', 120_000, 100, 86_400_000),
      retryDeadlineMs: int(env, 'OPENVAT_BATCH_RETRY_DEADLINE_MS', 3_600_000, 0, 7 * 86_400_000),
      retryBackoffMs: int(env, 'OPENVAT_BATCH_RETRY_BACKOFF_MS', 5_000, 1, 3_600_000),
      jobRetentionDays: int(env, 'OPENVAT_BATCH_JOB_RETENTION_DAYS', 30, 1, 36_500),
    },
    monitors: {
      maxPerKey: {
        pro: int(env, 'OPENVAT_MONITORS_PRO', 10_000, 0, 100_000_000),
        business: int(env, 'OPENVAT_MONITORS_BUSINESS', 100_000, 0, 100_000_000),
      },
      concurrency: int(env, 'OPENVAT_MONITOR_CONCURRENCY', 32, 1, 10_000),
      perCountry: int(
        env,
        'OPENVAT_MONITOR_PER_COUNTRY',
        Math.max(1, int(env, 'OPENVAT_REGISTRY_CONCURRENCY', 2, 1, 1_000) - 1),
        1,
        1_000,
      ),
      leaseMs: int(env, 'OPENVAT_MONITOR_LEASE_MS', 120_000, 100, 86_400_000),
      retryBackoffMs: int(env, 'OPENVAT_MONITOR_RETRY_BACKOFF_MS', 60_000, 1, 86_400_000),
      staleAfterMs: int(env, 'OPENVAT_MONITOR_STALE_AFTER_MS', 3 * DAY * 1000, 0, 365 * DAY * 1000),
      checkRetentionDays: int(env, 'OPENVAT_MONITOR_CHECK_RETENTION_DAYS', 90, 1, 36_500),
      // VIES's published "unavailability shift" for Germany: daily 23:00–01:30 CET (21:00–00:30 UTC
      // covers it in summer time and in winter time).
      quietWindows: parseQuietWindows(
        'OPENVAT_MONITOR_QUIET_WINDOWS',
        str(env, 'OPENVAT_MONITOR_QUIET_WINDOWS', 'DE=21:00-00:30'),
      ),
    },
  };
  checkAnswerBound(config);
  noPlaceholderPassword('DATABASE_URL', config.databaseUrl);
  noPlaceholderPassword('REDIS_URL', config.redisUrl);
  return deepFreeze(config);
}

/** Time a request needs besides its registry work: Redis commands of the breaker, the store, the commit. */
export const ANSWER_MARGIN_MS = 2_000;

/**
 * The longest a client's validation spends on its registry: the permit wait or the retry deadline,
 * whichever is longer, plus one call's timeout (see `createLiveAnswers`).
 */
export function registryAnswerBoundMs(r: Config['registries']): number {
  return Math.max(r.permitWaitMs, r.deadlineMs) + r.timeoutMs;
}

/**
 * Every request is answered before the server's idle timeout destroys its socket: the registry work
 * with its margin must fit. (Node's request timeout covers receiving the request only, not the
 * handler's work, so it does not enter.)
 */
function checkAnswerBound(config: Config): void {
  const idle = config.connections.idleTimeoutMs;
  // A national register asked after VIES failed adds at most its own deadline.
  const fallback = config.national.enabled.length > 0 ? config.national.timeoutMs : 0;
  const needed = registryAnswerBoundMs(config.registries) + fallback + ANSWER_MARGIN_MS;
  if (idle > 0 && idle < needed) {
    const r = config.registries;
    throw new ConfigError(
      `OPENVAT_IDLE_TIMEOUT_MS (${idle}) must be at least max(OPENVAT_REGISTRY_PERMIT_WAIT_MS (${r.permitWaitMs}), ` +
        `OPENVAT_REGISTRY_DEADLINE_MS (${r.deadlineMs})) + OPENVAT_REGISTRY_TIMEOUT_MS (${r.timeoutMs}) + ` +
        (fallback > 0 ? `OPENVAT_NATIONAL_TIMEOUT_MS (${fallback}) + ` : '') +
        `${ANSWER_MARGIN_MS} = ${needed}, so a validation is answered before its connection is cut`,
    );
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
