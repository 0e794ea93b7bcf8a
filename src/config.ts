import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type NationalConfig, nationalConfig } from './config/national.js';
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
  type QuietWindow,
  redisPrefix,
  str,
  tedbUrl,
  trustProxy,
  url,
} from './config/readers.js';
import { timestamps } from './config/timestamps.js';

export {
  ConfigError,
  DEFAULT_DATABASE_URL,
  parseQuietWindows,
  type QuietWindow,
} from './config/readers.js';

/** The package root (one level above `src/` or `dist/`). */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly databaseUrl: string;
  /** PostgreSQL only: the connection pool of each instance and a bound on every statement. */
  readonly postgres: {
    /** Connections one instance opens at most. */
    readonly poolSize: number;
    /** A statement running longer is cancelled by the server (0 = no bound); migrations are not bound. */
    readonly statementTimeoutMs: number;
  };
  /**
   * The proxies whose `X-Forwarded-For` is believed (addresses, CIDR ranges, or `loopback`,
   * `linklocal`, `uniquelocal`); empty: the client is the connection's peer.
   */
  readonly trustProxy: readonly string[] | number;
  readonly redisUrl: string | null;
  /** Prefix of every Redis key the service writes, so several deployments can share one Redis. */
  readonly redisPrefix: string;
  /** How long a registry permit held in Redis lives without renewal (a dead instance's permits free after it). */
  readonly permitLeaseMs: number;
  readonly logLevel: string;
  readonly ratesPath: string;
  /** An operator's overrides of the rates (a JSON file of periods per country), or null. */
  readonly ratesOverridesPath: string | null;
  /** TEDB's VatRetrievalService, asked daily for the member states' rates; null when `off`. */
  readonly tedbUrl: string | null;
  /** Request body limit in bytes. */
  readonly bodyLimit: number;
  /** Limits on client connections, so slow or idle clients cannot hold sockets forever. */
  readonly connections: {
    /** Time to receive a whole request (headers and body); then 408 and the socket is closed. */
    readonly requestTimeoutMs: number;
    /** Time to receive the request headers. */
    readonly headersTimeoutMs: number;
    /** How long an idle keep-alive connection is kept open between requests. */
    readonly keepAliveTimeoutMs: number;
    /** A socket without any traffic for this long is destroyed (0 = never). */
    readonly idleTimeoutMs: number;
    /** Requests one keep-alive connection may carry before it is closed (0 = no limit). */
    readonly maxRequestsPerSocket: number;
    /** Open connections one instance accepts; more are closed at once (0 = no limit). */
    readonly maxConnections: number;
  };
  /** Whether `/docs` offers the playground's demo key (test mode, 30 requests per hour per IP). */
  readonly playground: boolean;
  /** When set, `GET /metrics` serves Prometheus metrics to `Authorization: Bearer <token>`. */
  readonly metricsToken: string | null;
  /** Requests per minute per IP on the public rates endpoints. */
  readonly publicRateLimitPerMinute: number;
  /**
   * How long an instance reuses a key it has looked up (0 = look up every request). A key revoked
   * through another instance or the CLI keeps working here for at most this long.
   */
  readonly keyCacheMs: number;
  /** Failed authentications a client address may make per minute; then 429 until the minute ends. */
  readonly authFailuresPerMinute: number;
  /** The admin API and console. */
  readonly admin: {
    /** `OPENVAT_ADMIN_KEY`: made an admin key at every start, or null. */
    readonly key: string | null;
    /** A listener of their own (`OPENVAT_ADMIN_HOST`/`OPENVAT_ADMIN_PORT`), or null: the public one. */
    readonly listener: { readonly host: string; readonly port: number } | null;
    /** Days an entry of the admin audit log is kept (at least 365). */
    readonly auditRetentionDays: number;
  };
  /** Requests per minute per key on authenticated endpoints, by plan. */
  readonly keyRateLimitPerMinute: Readonly<Record<'free' | 'starter' | 'pro' | 'business', number>>;
  /** Calls per calendar month (UTC) of a key without a `monthly_quota` of its own, by plan; null = unlimited. */
  readonly keyMonthlyQuota: Readonly<Record<'free' | 'starter' | 'pro' | 'business', number | null>>;
  readonly registries: {
    readonly viesUrl: string;
    readonly viesSoapUrl: string;
    readonly hmrcUrl: string;
    readonly hmrcClientId: string | null;
    readonly hmrcClientSecret: string | null;
    readonly bfsUrl: string;
    readonly brregUrl: string;
    readonly evatrUrl: string;
    readonly timeoutMs: number;
    /** Concurrent calls per registry and member state. */
    readonly concurrencyPerCountry: number;
    /** How long one validation may spend retrying a throttled registry. */
    readonly deadlineMs: number;
    /** How long a client's validation waits for a free registry call before the registry counts as busy. */
    readonly permitWaitMs: number;
    /** Base of the jittered backoff between those retries. */
    readonly backoffMs: number;
    /** Consecutive failures that open a country's circuit breaker, and how long it stays open. */
    readonly breakerThreshold: number;
    readonly breakerOpenMs: number;
    /** How often the VIES status endpoint is polled (0 = never). */
    readonly statusPollMs: number;
  };
  /** The national VAT registers asked when VIES cannot answer for their member state. */
  readonly national: NationalConfig;
  readonly cache: {
    readonly validTtlSeconds: number;
    readonly invalidTtlSeconds: number;
    readonly degradedWindowSeconds: number;
  };
  /** `OPENVAT_EVIDENCE_KEY`: the Ed25519 private key that signs the evidence chain head, or null. */
  readonly evidenceKey: string | null;
  /** Trusted timestamps of the evidence chain head (RFC 3161); off when `urls` is empty. */
  readonly timestamps: {
    /** `OPENVAT_TSA_URLS`: the authorities, tried in order. */
    readonly urls: readonly string[];
    /**
     * `OPENVAT_TSA_ROOTS`: the certificates (PEM blocks) tokens are verified against, and only
     * those; null when unset (then `urls` is empty).
     */
    readonly roots: { readonly path: string; readonly pems: readonly string[] } | null;
    /** `OPENVAT_TSA_INTERVAL`: how often a new head is time-stamped (when there are new links). */
    readonly intervalMs: number;
    /** `OPENVAT_TSA_TIMEOUT_MS`: how long one authority is given to answer. */
    readonly timeoutMs: number;
  };
  readonly confirmations: {
    /** Confirmations allowed per API key in a burst, refilled evenly over `burstWindowSeconds`. */
    readonly burst: number;
    readonly burstWindowSeconds: number;
  };
  readonly webhooks: {
    readonly allowPrivate: boolean;
    readonly backoffMs: number;
  };
  readonly batch: {
    /** Batch items a worker validates at the same time (the per-country limiter paces them). */
    readonly concurrency: number;
    /** How long a claimed item stays leased; an item of a crashed worker is claimed again after it. */
    readonly leaseMs: number;
    /** How long an item whose registry is unavailable is retried before it fails. */
    readonly retryDeadlineMs: number;
    /** Base of the exponential backoff between those retries. */
    readonly retryBackoffMs: number;
    /** Days an ended job (completed or cancelled) and its items are kept after it ended. */
    readonly jobRetentionDays: number;
  };
  readonly monitors: {
    /** Most monitored numbers per API key, by plan (plans without monitoring have none). */
    readonly maxPerKey: Readonly<Record<'pro' | 'business', number>>;
    /** Checks one instance runs at the same time, over all member states. */
    readonly concurrency: number;
    /**
     * Checks one instance runs at the same time per member state; below the registry concurrency so
     * interactive validations always find a free slot.
     */
    readonly perCountry: number;
    /** How long a claimed check stays leased; a crashed instance's checks are claimed again after it. */
    readonly leaseMs: number;
    /** Base of the backoff between retries of a check whose registry did not answer. */
    readonly retryBackoffMs: number;
    /** Time without a successful check after which a monitor is flagged `stale`. */
    readonly staleAfterMs: number;
    /** Days a check stays in a monitor's history (changes stay as long as the monitor). */
    readonly checkRetentionDays: number;
    /** UTC windows per prefix in which no scheduled check is made (registries' maintenance). */
    readonly quietWindows: ReadonlyArray<QuietWindow>;
  };
}

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
