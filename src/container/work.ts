import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { createWorker, type Timers, type Worker } from '../jobs/worker.js';
import type { Clock } from '../lib/clock.js';
import type { IdGenerator } from '../lib/ids.js';
import { createBatchRepository } from '../modules/batch/repository.js';
import { type BatchService, createBatchService } from '../modules/batch/service.js';
import type { KeysService } from '../modules/keys/service.js';
import type { Metrics } from '../modules/metrics/service.js';
import { createMonitorsRepository } from '../modules/monitors/repository.js';
import { createMonitorsService, type MonitorsService } from '../modules/monitors/service.js';
import type { Outbox } from '../modules/outbox/service.js';
import type { PeppolPort } from '../modules/peppol/index.js';
import type { ValidationService } from '../modules/validation/service.js';
import type { createTestModeAnswers } from '../modules/validation/test-answers.js';
import { createWebhooksRepository } from '../modules/webhooks/repository.js';
import { createWebhooksService, type WebhooksService } from '../modules/webhooks/service.js';
import { createHttpTransport, type WebhookTransport } from '../modules/webhooks/transport.js';
import { systemDns } from '../modules/webhooks/url-guard.js';
import type { Ports } from './types.js';

// The container's queued work: webhook deliveries, batch jobs and monitors, each a service (what
// requests and commands call) and a worker (what a running service starts). A service tells its
// worker of new work only when this process made the worker: a command that queues work leaves it
// to the running service's worker, which finds it on its next poll.

interface WorkDeps {
  config: Config;
  log: Logger;
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  ports: Ports;
}

/** The webhooks service and its transport (made once, closed with the container). */
export function createWebhooksPart(deps: WorkDeps & { metrics: Metrics }) {
  const { config, db, clock, ids, ports } = deps;
  const transport: WebhookTransport = ports.webhookTransport ?? createHttpTransport();
  const service = createWebhooksService({
    db: db.kysely,
    repository: createWebhooksRepository(db.kysely, db.dialect),
    clock,
    ids,
    dns: ports.dns ?? systemDns,
    transport,
    allowPrivate: config.webhooks.allowPrivate,
    backoffMs: config.webhooks.backoffMs,
    workerId: ids.uuid(),
    observer: deps.metrics.observer,
  });
  return { service, transport };
}

/** Delivers queued webhooks. */
export function createWebhookWorker(deps: {
  log: Logger;
  webhooks: WebhooksService;
  timers?: Timers;
}): Worker {
  const { log, webhooks } = deps;
  return createWorker({
    name: 'webhooks',
    claim: (limit) => webhooks.claimDue(limit),
    handle: (delivery, signal) => webhooks.deliver(delivery, signal),
    concurrency: 32,
    idleDelayMs: 500,
    onError: (error) => log.error({ err: error }, 'webhook worker failed'),
    ...(deps.timers ? { timers: deps.timers } : {}),
  });
}

/** Batch validation: synchronous batches and durable batch jobs. */
export function createBatchPart(
  deps: WorkDeps & {
    validation: ValidationService;
    peppol: PeppolPort;
    outbox: Outbox;
    keys: KeysService;
    /** Tells this process's batch worker of new items, when it has one. */
    notify: () => void;
  },
): BatchService {
  const { config, log, db, clock, ids } = deps;
  return createBatchService({
    db,
    repository: createBatchRepository(db.kysely, db.dialect),
    validation: deps.validation,
    peppol: deps.peppol,
    outbox: deps.outbox,
    clock,
    ids,
    workerId: ids.uuid(),
    keyState: (keyId) => deps.keys.stateOf(keyId),
    jobRetentionDays: config.batch.jobRetentionDays,
    leaseMs: config.batch.leaseMs,
    retryDeadlineMs: config.batch.retryDeadlineMs,
    retryBackoffMs: config.batch.retryBackoffMs,
    perCountryInFlight: Math.max(4, config.registries.concurrencyPerCountry * 4),
    minClaim: Math.max(1, Math.floor(config.batch.concurrency / 16)),
    onQueued: deps.notify,
    onError: (error) => log.error({ err: error }, 'batch worker failed'),
  });
}

/** Works batch job items. */
export function createBatchWorker(deps: {
  config: Config;
  log: Logger;
  batch: BatchService;
  timers?: Timers;
}): Worker {
  const { log, batch } = deps;
  return createWorker({
    name: 'batch',
    claim: (limit) => batch.claimDue(limit),
    handle: (item, signal) => batch.processItem(item, signal),
    concurrency: deps.config.batch.concurrency,
    idleDelayMs: 500,
    // Each country keeps several items queued at its limiter, so waiting a moment before a refill
    // starves none; it turns a claim per finished item into a claim per few.
    refillDelayMs: 20,
    onError: (error) => log.error({ err: error }, 'batch worker failed'),
    ...(deps.timers ? { timers: deps.timers } : {}),
  });
}

/** Monitoring: numbers re-checked on a schedule, changes sent as events. */
export function createMonitorsPart(
  deps: WorkDeps & {
    validation: ValidationService;
    peppol: PeppolPort;
    testAnswers: ReturnType<typeof createTestModeAnswers>;
    outbox: Outbox;
    keys: KeysService;
    /** Tells this process's monitor scheduler of new monitors, when it has one. */
    notify: () => void;
  },
): MonitorsService {
  const { db, clock, ids } = deps;
  const m = deps.config.monitors;
  return createMonitorsService({
    db,
    repository: createMonitorsRepository(db.kysely, db.dialect),
    validation: deps.validation,
    peppol: deps.peppol,
    testAnswers: deps.testAnswers,
    outbox: deps.outbox,
    clock,
    ids,
    workerId: ids.uuid(),
    keyState: (keyId) => deps.keys.stateOf(keyId),
    maxPerKey: m.maxPerKey,
    perCountry: m.perCountry,
    leaseMs: m.leaseMs,
    retryBackoffMs: m.retryBackoffMs,
    staleAfterMs: m.staleAfterMs,
    checkRetentionDays: m.checkRetentionDays,
    quietWindows: m.quietWindows,
    onQueued: deps.notify,
  });
}

/** Runs due monitor checks. */
export function createMonitorScheduler(deps: {
  config: Config;
  log: Logger;
  monitors: MonitorsService;
  timers?: Timers;
}): Worker {
  const { log, monitors } = deps;
  return createWorker({
    name: 'monitors',
    claim: (limit) => monitors.claimDue(limit),
    handle: (row, signal) => monitors.runClaimed(row, signal),
    concurrency: deps.config.monitors.concurrency,
    idleDelayMs: 1_000,
    refillDelayMs: 20,
    onError: (error) => log.error({ err: error }, 'monitor scheduler failed'),
    ...(deps.timers ? { timers: deps.timers } : {}),
  });
}
