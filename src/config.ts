import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keyMonthlyQuotas, keyRateLimits } from './config/keys.js';
import { nationalConfig } from './config/national.js';
import { peppol } from './config/peppol.js';
import {
  admin,
  bearerSecret,
  bool,
  ConfigError,
  connections,
  databaseUrl,
  type Env,
  evidenceKey,
  int,
  logLevel,
  noPlaceholderPassword,
  optional,
  overridesPath,
  redisPrefix,
  str,
  tedbUrl,
  trustProxy,
} from './config/readers.js';
import { cache, registries } from './config/registries.js';
import { timestamps } from './config/timestamps.js';
import type { Config } from './config/types.js';
import { batch, confirmations, monitors, webhooks } from './config/work.js';

export {
  ConfigError,
  DEFAULT_DATABASE_URL,
  parseQuietWindows,
} from './config/readers.js';
export type { Config, QuietWindow } from './config/types.js';

/**
 * The package root: the nearest folder above this module with openvat's package.json (this module
 * is src/config.ts in a checkout, and part of a file under dist/cli/ when built).
 */
export const PACKAGE_ROOT = packageRoot(dirname(fileURLToPath(import.meta.url)));

function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'openvat'
    )
      return dir;
    if (dirname(dir) === dir) throw new Error(`openvat's package.json was not found above ${from}`);
  }
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
    keyRateLimitPerMinute: keyRateLimits(env),
    keyMonthlyQuota: keyMonthlyQuotas(env),
    registries: registries(env),
    national: nationalConfig(env),
    cache: cache(env),
    evidenceKey: evidenceKey(env),
    timestamps: timestamps(env),
    confirmations: confirmations(env),
    peppol: peppol(env),
    webhooks: webhooks(env),
    batch: batch(env),
    monitors: monitors(env),
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
