/**
 * The shape of the configuration `loadConfig` (src/config.ts) returns: types only, so the readers of
 * src/config/ and the file that puts them together share it without importing each other.
 */
import type { DnsServer } from '../lib/dns-names.js';
import type { NationalSource } from '../lib/national-sources.js';

/** A daily UTC window (minutes since midnight; `end` may be below `start`: it spans midnight). */
export interface QuietWindow {
  readonly country: string;
  readonly start: number;
  readonly end: number;
}

export interface PeppolConfig {
  /** `PEPPOL_SML_ZONE`: the SML zone, e.g. `participant.sml.prod.tech.peppol.org`. */
  readonly smlZone: string;
  /** `PEPPOL_DNS_SERVERS`: the resolvers asked in turn; null = the system's. */
  readonly dnsServers: readonly DnsServer[] | null;
  /** `PEPPOL_ALLOW_PRIVATE_SMP`: SMPs at private addresses and over plain http may be called. */
  readonly allowPrivateSmp: boolean;
  /** `PEPPOL_DNS_TIMEOUT_MS`: one DNS query (each server is asked in turn). */
  readonly dnsTimeoutMs: number;
  /** `PEPPOL_SMP_TIMEOUT_MS`: one SMP request. */
  readonly smpTimeoutMs: number;
}

export interface NationalConfig {
  /** The registers asked as fallbacks; empty: none (`OPENVAT_NATIONAL_FALLBACKS=none`). */
  readonly enabled: readonly NationalSource[];
  readonly plUrl: string;
  readonly czUrl: string;
  readonly roUrl: string;
  readonly fiUrl: string;
  readonly skUrl: string;
  /** Without a key the Slovak register is not asked. */
  readonly skKey: string | null;
  readonly siUrl: string;
  readonly lvUrl: string;
  /** The deadline of one register call (`OPENVAT_NATIONAL_TIMEOUT_MS`). */
  readonly timeoutMs: number;
  /** How often the published files are synced (`OPENVAT_REGISTERS_SYNC_MS`, 0 = only by `openvat registers sync`). */
  readonly syncEveryMs: number;
  /** A file copy older than this many days is not answered from (`OPENVAT_REGISTERS_MAX_AGE_DAYS`). */
  readonly maxAgeDays: number;
  /**
   * Rows a whole file has at least (`OPENVAT_REGISTERS_MIN_ROWS`); null: each file's own minimum.
   * Lowered only for the simulators' small files.
   */
  readonly minRows: number | null;
}

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
    /** The Commission's EOS EORI validation service (SOAP); HMRC's EORI API is under `hmrcUrl`. */
    readonly eosUrl: string;
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
  /** The Peppol look-up (`GET /v1/peppol/{identifier}`): SML zone, DNS servers, SMP address rules. */
  readonly peppol: PeppolConfig;
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
