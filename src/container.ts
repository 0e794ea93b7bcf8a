import { pino } from 'pino';
import { type Config, ConfigError, DEFAULT_DATABASE_URL } from './config.js';
import { createKeyAdministration } from './container/administration.js';
import { startBackground } from './container/background.js';
import { createEvidence } from './container/evidence.js';
import { createLiveRegistries } from './container/live-registries.js';
import { createRatesUpdatesFor } from './container/rates.js';
import { connectRedis } from './container/redis.js';
import type { Container, Ports } from './container/types.js';
import { createDatabase } from './db/database.js';
import { createWorker } from './jobs/worker.js';
import { systemClock } from './lib/clock.js';
import { createIdGenerator } from './lib/ids.js';
import { createWindowLimiter } from './lib/window-limiter.js';
import { createAdminAuth } from './modules/admin/auth.js';
import { createAuditsRepository } from './modules/audits/repository.js';
import { createAuditsService } from './modules/audits/service.js';
import { createBatchRepository } from './modules/batch/repository.js';
import { createBatchService } from './modules/batch/service.js';
import { createDecideService } from './modules/decide/service.js';
import { createEventsRepository } from './modules/events/repository.js';
import { createEventsService } from './modules/events/service.js';
import { createAuth } from './modules/keys/auth.js';
import { createMonthlyQuota } from './modules/keys/quota.js';
import { createQuotaRepository } from './modules/keys/quota-repository.js';
import { createKeysRepository } from './modules/keys/repository.js';
import { createKeysService } from './modules/keys/service.js';
import { createMetrics } from './modules/metrics/service.js';
import { createMonitorsRepository } from './modules/monitors/repository.js';
import { createMonitorsService } from './modules/monitors/service.js';
import { createResponseRecorder } from './modules/outbox/reply.js';
import { createOutbox } from './modules/outbox/service.js';
import { createPlayground } from './modules/playground/playground.js';
import { loadRatesDataset, type RatesDataset } from './modules/rates/dataset.js';
import { loadRatesOverrides, RatesOverridesError } from './modules/rates/overrides.js';
import { createRatesService } from './modules/rates/service.js';
import { createUsageRepository } from './modules/usage/repository.js';
import { createUsageService } from './modules/usage/service.js';
import { createCachedAnswerCheck, type ValidateQuery } from './modules/validation/index.js';
import { createValidationService } from './modules/validation/service.js';
import { createTestModeAnswers } from './modules/validation/test-answers.js';
import { createWebhooksRepository } from './modules/webhooks/repository.js';
import { createWebhooksService } from './modules/webhooks/service.js';
import { createHttpTransport } from './modules/webhooks/transport.js';
import { systemDns } from './modules/webhooks/url-guard.js';

export type { Container, Ports };

/** The operator's rates overrides; a file that does not check stops the start (a configuration error). */
function loadOverrides(path: string, curated: RatesDataset) {
  try {
    return loadRatesOverrides(path, curated);
  } catch (error) {
    if (error instanceof RatesOverridesError) throw new ConfigError(error.message);
    throw error;
  }
}

/** The composition root: every service is created and wired here, once. */
export async function createContainer(config: Config, ports: Ports = {}): Promise<Container> {
  const log = ports.log ?? pino({ level: config.logLevel });
  const db =
    ports.db ??
    createDatabase(config.databaseUrl, {
      // A new SQLite database where the operator clearly asked for one: the default path (with its
      // directory), or a directory that exists (see `createDatabase`).
      createDirectory: config.databaseUrl === DEFAULT_DATABASE_URL,
      poolSize: config.postgres.poolSize,
      statementTimeoutMs: config.postgres.statementTimeoutMs,
      onConnectionError: (error) =>
        log.warn({ err: error }, 'PostgreSQL ended an idle connection; the pool opens a new one on next use'),
    });
  await db.migrate();
  const clock = ports.clock ?? systemClock;
  const ids = ports.ids ?? createIdGenerator();
  const redis =
    ports.redis !== undefined ? ports.redis : config.redisUrl ? await connectRedis(config.redisUrl) : null;

  const keys = createKeysService({
    db: db.kysely,
    repository: createKeysRepository(db.kysely),
    clock,
    ids,
    cacheMs: config.keyCacheMs,
    ...(ports.keySecrets ? { secrets: ports.keySecrets } : {}),
  });
  const administration = await createKeyAdministration({ config, log, db, clock, ids, redis, keys, ports });
  const { authFailures, keyPropagation, admin, manageKeys } = administration;
  const playground = createPlayground({
    enabled: config.playground,
    clock,
    redis,
    redisPrefix: config.redisPrefix,
    onError: (error) => log.warn({ err: error }, 'playground limit: Redis unavailable, counting locally'),
  });
  const usage = createUsageService({
    repository: createUsageRepository(db.kysely),
    clock,
    requestsPerMinute: config.keyRateLimitPerMinute,
    onError: (error) => log.error({ err: error }, 'writing usage counts failed'),
  });
  const curated = ports.ratesDataset ?? loadRatesDataset(config.ratesPath);
  const overrides = config.ratesOverridesPath ? loadOverrides(config.ratesOverridesPath, curated) : [];
  const rates = createRatesService({ dataset: curated, clock });

  const audits = createAuditsService({ repository: createAuditsRepository(db.kysely), clock });
  const events = createEventsService({ repository: createEventsRepository(db.kysely), clock, ids });
  const metrics = createMetrics();

  const registryConfig = config.registries;
  const live = createLiveRegistries({
    config,
    log,
    db,
    clock,
    ids,
    redis,
    metrics,
    ...(ports.registries ? { registries: ports.registries } : {}),
  });
  const { breaker, permits, registryAnswers, liveAnswers } = live;
  const statusService = live.status;
  const testAnswers = createTestModeAnswers({ clock });
  const validation = createValidationService({
    rates,
    clock,
    sources: { live: liveAnswers, test: testAnswers },
  });
  // Monthly quotas of keys; beyond one, a validation the cache answers is still served.
  const wouldBeCached = createCachedAnswerCheck({ validation, liveAnswers });
  const monthlyQuota = createMonthlyQuota({
    repository: createQuotaRepository(db.kysely),
    clock,
    planDefaults: config.keyMonthlyQuota,
    answeredFromCache: async (request) =>
      request.routeOptions.url === '/v1/validate' &&
      request.principal !== null &&
      wouldBeCached(request.query as ValidateQuery, request.principal.mode),
  });
  const decide = createDecideService({ validation, rates, clock });
  const { confirmations, evidenceTimestamps, proofs } = createEvidence({
    config,
    ports,
    db,
    clock,
    ids,
    log,
    metrics,
    audits,
    guards: { breaker, permits },
  });
  const timers: NodeJS.Timeout[] = [];

  const webhookTransport = ports.webhookTransport ?? createHttpTransport();
  const webhooks = createWebhooksService({
    db: db.kysely,
    repository: createWebhooksRepository(db.kysely, db.dialect),
    clock,
    ids,
    dns: ports.dns ?? systemDns,
    transport: webhookTransport,
    allowPrivate: config.webhooks.allowPrivate,
    backoffMs: config.webhooks.backoffMs,
    workerId: ids.uuid(),
    observer: metrics.observer,
  });
  const webhookWorker = createWorker({
    name: 'webhooks',
    claim: (limit) => webhooks.claimDue(limit),
    handle: (delivery, signal) => webhooks.deliver(delivery, signal),
    concurrency: 32,
    idleDelayMs: 500,
    onError: (error) => log.error({ err: error }, 'webhook worker failed'),
    ...(ports.timers ? { timers: ports.timers } : {}),
  });
  const outbox = createOutbox({
    db: db.kysely,
    answers: {
      storeMany: (answers, trx) => registryAnswers.upsertMany(answers, trx),
      remember: (answers) => liveAnswers.remember(answers),
    },
    audits,
    events,
    deliveries: {
      enqueueMany: (events, trx) => webhooks.enqueueMany(events, trx),
      enqueueBroadcasts: (events, trx) => webhooks.enqueueBroadcasts(events, trx),
      notify: () => webhookWorker.notify(),
    },
    onCommit: metrics.observer.groupCommit,
  });
  const ratesUpdates = createRatesUpdatesFor({
    config,
    log,
    db,
    clock,
    ids,
    curated,
    overrides,
    rates,
    outbox,
    ...(ports.tedb ? { tedb: ports.tedb } : {}),
  });
  // What earlier syncs learnt is served from the first request on.
  await ratesUpdates.reload();
  metrics.connectRates(() => ratesUpdates.status());

  const batch = createBatchService({
    db,
    repository: createBatchRepository(db.kysely, db.dialect),
    validation,
    outbox,
    clock,
    ids,
    workerId: ids.uuid(),
    keyState: (keyId) => keys.stateOf(keyId),
    jobRetentionDays: config.batch.jobRetentionDays,
    leaseMs: config.batch.leaseMs,
    retryDeadlineMs: config.batch.retryDeadlineMs,
    retryBackoffMs: config.batch.retryBackoffMs,
    perCountryInFlight: Math.max(4, registryConfig.concurrencyPerCountry * 4),
    minClaim: Math.max(1, Math.floor(config.batch.concurrency / 16)),
    onQueued: () => batchWorker.notify(),
    onError: (error) => log.error({ err: error }, 'batch worker failed'),
  });
  const batchWorker = createWorker({
    name: 'batch',
    claim: (limit) => batch.claimDue(limit),
    handle: (item, signal) => batch.processItem(item, signal),
    concurrency: config.batch.concurrency,
    idleDelayMs: 500,
    // Each country keeps several items queued at its limiter, so waiting a moment before a refill
    // starves none; it turns a claim per finished item into a claim per few.
    refillDelayMs: 20,
    onError: (error) => log.error({ err: error }, 'batch worker failed'),
    ...(ports.timers ? { timers: ports.timers } : {}),
  });

  const m = config.monitors;
  const monitors = createMonitorsService({
    db,
    repository: createMonitorsRepository(db.kysely, db.dialect),
    validation,
    testAnswers,
    outbox,
    clock,
    ids,
    workerId: ids.uuid(),
    keyState: (keyId) => keys.stateOf(keyId),
    maxPerKey: m.maxPerKey,
    perCountry: m.perCountry,
    leaseMs: m.leaseMs,
    retryBackoffMs: m.retryBackoffMs,
    staleAfterMs: m.staleAfterMs,
    checkRetentionDays: m.checkRetentionDays,
    quietWindows: m.quietWindows,
    onQueued: () => monitorScheduler.notify(),
  });
  const monitorScheduler = createWorker({
    name: 'monitors',
    claim: (limit) => monitors.claimDue(limit),
    handle: (row, signal) => monitors.runClaimed(row, signal),
    concurrency: m.concurrency,
    idleDelayMs: 1_000,
    refillDelayMs: 20,
    onError: (error) => log.error({ err: error }, 'monitor scheduler failed'),
    ...(ports.timers ? { timers: ports.timers } : {}),
  });

  return {
    config,
    log,
    db,
    clock,
    ids,
    redis,
    keys,
    rates,
    ratesUpdates,
    publicLimiter: createWindowLimiter({ max: config.publicRateLimitPerMinute, windowMs: 60_000, clock }),
    playground,
    requireKey: createAuth(keys, playground, authFailures),
    admin,
    manageKeys,
    keyPropagation,
    monthlyQuota,
    requireAdmin: createAdminAuth(admin, authFailures),
    authFailures,
    audits,
    events,
    outbox,
    sendRecorded: createResponseRecorder(outbox, audits, (error) =>
      log.error({ err: error }, 'could not mark an audit record as not delivered'),
    ),
    validation,
    decide,
    liveAnswers,
    status: statusService,
    national: live.national,
    registryStatus: () => statusService.snapshot(),
    metrics,
    confirmations,
    evidenceTimestamps,
    proofs,
    usage,
    webhooks,
    webhookWorker,
    batch,
    batchWorker,
    monitors,
    monitorScheduler,
    start() {
      webhookWorker.start();
      batchWorker.start();
      monitorScheduler.start();
      timers.push(
        ...startBackground({
          config,
          log,
          redis,
          live,
          audits,
          admin,
          confirmations,
          evidenceTimestamps,
          monitors,
          batch,
          usage,
          ratesUpdates,
        }),
      );
    },
    async close() {
      await monitorScheduler.stop();
      await batchWorker.stop();
      await webhookWorker.stop();
      webhookTransport.close();
      for (const timer of timers.splice(0)) clearInterval(timer);
      await usage.flush().catch((error: unknown) => log.error({ err: error }, 'writing usage counts failed'));
      await statusService.stop().catch(() => {});
      permits.close();
      keyPropagation.close();
      if (redis) redis.disconnect();
      await db.close();
    },
  };
}
