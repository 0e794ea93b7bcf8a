import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { type Config, registryAnswerBoundMs } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { IdGenerator } from '../lib/ids.js';
import { registryStatusFrom } from '../modules/metrics/registry-status.js';
import { createMetricsRepository } from '../modules/metrics/repository.js';
import type { Metrics } from '../modules/metrics/service.js';
import { createInstancesRepository } from '../modules/status/repository.js';
import { createStatusService, type StatusService } from '../modules/status/service.js';
import { createLiveAnswers, type LiveAnswers } from '../modules/validation/live.js';
import { createRegistryAnswersRepository } from '../modules/validation/repository.js';
import { createRegistryClients, type RegistryClients } from '../registries/index.js';
import {
  type BreakerStore,
  type Coalescer,
  createCoalescer,
  createLocalBreaker,
  createPermits,
  createRedisBreaker,
  createSharedCoalescer,
  type Permits,
  type RedisLike,
} from '../registries/resilience.js';
import { createNationalRegisters, type NationalRegisters } from './national.js';

/** The registry side of the container: clients, their limits and breakers, the live answers, status. */
export interface LiveRegistries {
  readonly registries: Pick<RegistryClients, 'clientForPrefix' | 'viesStatus'>;
  readonly instanceId: string;
  readonly breaker: BreakerStore;
  readonly permits: Permits;
  readonly registryAnswers: ReturnType<typeof createRegistryAnswersRepository>;
  readonly liveAnswers: LiveAnswers;
  readonly status: StatusService;
  /** The member states' own registers, asked when VIES cannot answer. */
  readonly national: NationalRegisters;
  /** Logs, at most once a minute, that Redis is unreachable and limits are counted per instance. */
  onDegraded(error: unknown): void;
}

/**
 * Registry clients from the configured URLs (or the given ones), with limits, breakers and
 * coalescing shared through Redis when it is configured, the live answer source over them, and the
 * status service that reports them.
 */
export function createLiveRegistries(deps: {
  config: Config;
  log: Logger;
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  redis: Redis | null;
  metrics: Metrics;
  registries?: Pick<RegistryClients, 'clientForPrefix' | 'viesStatus'>;
}): LiveRegistries {
  const { config, log, db, clock, ids, redis, metrics } = deps;
  const registryConfig = config.registries;
  const registries =
    deps.registries ??
    createRegistryClients({
      vies: {
        baseUrl: registryConfig.viesUrl,
        soapUrl: registryConfig.viesSoapUrl,
        timeoutMs: registryConfig.timeoutMs,
      },
      hmrc: {
        baseUrl: registryConfig.hmrcUrl,
        ...(registryConfig.hmrcClientId ? { clientId: registryConfig.hmrcClientId } : {}),
        ...(registryConfig.hmrcClientSecret ? { clientSecret: registryConfig.hmrcClientSecret } : {}),
        timeoutMs: registryConfig.timeoutMs,
      },
      bfs: { baseUrl: registryConfig.bfsUrl, timeoutMs: registryConfig.timeoutMs },
      brreg: { baseUrl: registryConfig.brregUrl, timeoutMs: registryConfig.timeoutMs },
      // When an answer arrived: its `verified_at` when the registry gives no usable date.
      now: () => clock.now(),
    });
  // Registry limits, breakers and coalescing: shared through Redis when it is configured.
  const instanceId = ids.uuid();
  let lastRedisWarning = 0;
  const onDegraded = (error: unknown) => {
    const now = Date.now();
    if (now - lastRedisWarning < 60_000) return;
    lastRedisWarning = now;
    log.warn(
      { err: error },
      'Redis is unreachable: registry limits fall back to a per-instance share (ceil(limit / instances)) until it answers again',
    );
  };
  const breakerOptions = {
    failureThreshold: registryConfig.breakerThreshold,
    openMs: registryConfig.breakerOpenMs,
    // A trial whose caller died is presumed lost once no registry call could still be running.
    trialMs: registryAnswerBoundMs(registryConfig) + 1_000,
    now: () => clock.millis(),
  };
  let status: StatusService | null = null;
  const shared = redis
    ? { redis: redis as unknown as RedisLike, prefix: config.redisPrefix, onDegraded }
    : null;
  const breaker: BreakerStore = shared
    ? createRedisBreaker({ ...breakerOptions, ...shared })
    : createLocalBreaker(breakerOptions);
  const permits: Permits = createPermits({
    limitFor: () => registryConfig.concurrencyPerCountry,
    ...(shared
      ? { shared: { ...shared, leaseMs: config.permitLeaseMs, instances: () => status?.instances() ?? null } }
      : {}),
  });
  const coalescer: Coalescer = shared
    ? createSharedCoalescer({
        ...shared,
        lockMs: registryAnswerBoundMs(registryConfig) + 1_000,
        encode: (value) => JSON.stringify(value),
        decode: (text) => {
          const value = JSON.parse(text) as { kind: string; checkedAt?: string | Date };
          if (value.kind === 'answer' && typeof value.checkedAt === 'string')
            value.checkedAt = new Date(value.checkedAt);
          return value;
        },
      })
    : createCoalescer();
  const national = createNationalRegisters({
    config,
    log,
    db,
    workerId: instanceId,
    clock,
    redis,
    metrics,
    breaker,
    onDegraded,
  });
  const registryAnswers = createRegistryAnswersRepository(db.kysely);
  const liveAnswers = createLiveAnswers({
    clientFor: (prefix) => registries.clientForPrefix(prefix),
    repository: registryAnswers,
    clock,
    cache: config.cache,
    concurrencyPerCountry: registryConfig.concurrencyPerCountry,
    deadlineMs: registryConfig.deadlineMs,
    permitWaitMs: registryConfig.permitWaitMs,
    backoffBaseMs: registryConfig.backoffMs,
    breaker: breakerOptions,
    stores: { breaker, permits, coalescer },
    observer: metrics.observer,
    national: national.fallbacks,
  });
  status = createStatusService({
    clock,
    instanceId,
    repository: createInstancesRepository(db.kysely),
    breaker,
    permits,
    concurrencyLimit: registryConfig.concurrencyPerCountry,
    redisConfigured: redis !== null,
    onWarning: (message) => log.warn(message),
  });
  const statusService = status;
  metrics.connect({
    registryStatus: registryStatusFrom(() => statusService.snapshot()),
    pending: createMetricsRepository(db.kysely).pending,
  });
  metrics.connectNational(() => national.status());
  return {
    registries,
    instanceId,
    breaker,
    permits,
    registryAnswers,
    liveAnswers,
    status,
    national,
    onDegraded,
  };
}
