import type { Logger } from 'pino';
import { type Config, ConfigError } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { IdGenerator } from '../lib/ids.js';
import { createWindowLimiter } from '../lib/window-limiter.js';
import { createAdminAuth } from '../modules/admin/auth.js';
import { createAuditsRepository } from '../modules/audits/repository.js';
import { createAuditsService } from '../modules/audits/service.js';
import { createDecideService } from '../modules/decide/service.js';
import { createEventsRepository } from '../modules/events/repository.js';
import { createEventsService } from '../modules/events/service.js';
import { createAuth } from '../modules/keys/auth.js';
import { createMonthlyQuota } from '../modules/keys/quota.js';
import { createQuotaRepository } from '../modules/keys/quota-repository.js';
import { createMetrics } from '../modules/metrics/service.js';
import { createResponseRecorder } from '../modules/outbox/reply.js';
import { createOutbox } from '../modules/outbox/service.js';
import { createPlayground } from '../modules/playground/playground.js';
import { loadRatesDataset, type RatesDataset } from '../modules/rates/dataset.js';
import { loadRatesOverrides, RatesOverridesError } from '../modules/rates/overrides.js';
import { createRatesService } from '../modules/rates/service.js';
import { createUsageRepository } from '../modules/usage/repository.js';
import { createUsageService } from '../modules/usage/service.js';
import { createCachedAnswerCheck, type ValidateQuery } from '../modules/validation/index.js';
import { createValidationService } from '../modules/validation/service.js';
import { createTestModeAnswers } from '../modules/validation/test-answers.js';
import { systemDns } from '../modules/webhooks/url-guard.js';
import { wireAdministration } from './administration.js';
import { createEoriChecks } from './eori.js';
import { createEvidence } from './evidence.js';
import { createLiveRegistries } from './live-registries.js';
import type { MakePart } from './part.js';
import { createPeppol } from './peppol.js';
import { createRatesUpdatesFor } from './rates.js';
import type { Container, Ports } from './types.js';
import {
  createBatchPart,
  createBatchWorker,
  createMonitorScheduler,
  createMonitorsPart,
  createWebhooksPart,
  createWebhookWorker,
} from './work.js';

/** The operator's rates overrides; a file that does not check stops the start (a configuration error). */
function loadOverrides(path: string, curated: RatesDataset) {
  try {
    return loadRatesOverrides(path, curated);
  } catch (error) {
    if (error instanceof RatesOverridesError) throw new ConfigError(error.message);
    throw error;
  }
}

/** What every part is made from: made at once, before any part. */
export interface Base {
  config: Config;
  log: Logger;
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  redis: Container['redis'];
  ports: Ports;
}

/**
 * The container's parts and how each is made from the others; none is made here. A part asks for
 * another with `get()` when it is made, or later, when it is used.
 */
export function wireParts(b: Base, part: MakePart) {
  const { keys, administration } = wireAdministration(b, part);
  const basics = wireBasics(b, part);
  const lookups = wireLookups(b, part, basics);
  const answers = wireAnswers(b, part, { ...basics, ...lookups });
  const delivery = wireDelivery(b, part, { ...basics, ...lookups });
  const jobs = wireJobs(b, part, { ...lookups, ...answers, ...delivery, keys });
  const guards = wireGuards(b, part, { ...basics, ...delivery, keys, administration });
  return { keys, administration, ...basics, ...lookups, ...answers, ...delivery, ...jobs, ...guards };
}

export type Parts = ReturnType<typeof wireParts>;

type Basics = ReturnType<typeof wireBasics>;
type Lookups = ReturnType<typeof wireLookups>;
type Answers = ReturnType<typeof wireAnswers>;
type Delivery = ReturnType<typeof wireDelivery>;
type Administration = ReturnType<typeof wireAdministration>;

/** The parts made from the base alone: the demo limit, usage counts, rates, audits, events, metrics. */
function wireBasics(b: Base, part: MakePart) {
  const { config, log, db, clock, ids, redis, ports } = b;
  const playground = part('playground', () =>
    createPlayground({
      enabled: config.playground,
      clock,
      redis,
      redisPrefix: config.redisPrefix,
      onError: (error) => log.warn({ err: error }, 'playground limit: Redis unavailable, counting locally'),
    }),
  );
  const usage = part('usage', () =>
    createUsageService({
      repository: createUsageRepository(db.kysely),
      clock,
      requestsPerMinute: config.keyRateLimitPerMinute,
      onError: (error) => log.error({ err: error }, 'writing usage counts failed'),
    }),
  );
  const rates = part('rates', () => {
    const curated = ports.ratesDataset ?? loadRatesDataset(config.ratesPath);
    const overrides = config.ratesOverridesPath ? loadOverrides(config.ratesOverridesPath, curated) : [];
    return { curated, overrides, service: createRatesService({ dataset: curated, clock }) };
  });
  const audits = part('audits', () =>
    createAuditsService({ repository: createAuditsRepository(db.kysely), clock }),
  );
  const events = part('events', () =>
    createEventsService({ repository: createEventsRepository(db.kysely), clock, ids }),
  );
  const metrics = part('metrics', () => createMetrics());
  return { playground, usage, rates, audits, events, metrics };
}

/** The parts that ask the outside: the live registries, Peppol, EORI and the evidence's authorities. */
function wireLookups(b: Base, part: MakePart, { metrics, audits }: Pick<Basics, 'metrics' | 'audits'>) {
  const { config, log, db, clock, ids, redis, ports } = b;
  const live = part('live-registries', () =>
    createLiveRegistries({
      config,
      log,
      db,
      clock,
      ids,
      redis,
      metrics: metrics.get(),
      ...(ports.registries ? { registries: ports.registries } : {}),
    }),
  );
  const peppol = part('peppol', () =>
    createPeppol({
      config,
      log,
      db,
      clock,
      redis,
      dns: ports.dns ?? systemDns,
      onDegraded: live.get().onDegraded,
      observer: metrics.get().observer,
      breaker: live.get().breaker,
    }),
  );
  const eori = part('eori', () => {
    const { breaker, permits, onDegraded } = live.get();
    return createEoriChecks({
      config,
      db,
      clock,
      redis,
      metrics: metrics.get(),
      guards: { breaker, permits },
      onDegraded,
    });
  });
  const evidence = part('evidence', () => {
    const { breaker, permits } = live.get();
    return createEvidence({
      config,
      ports,
      db,
      clock,
      ids,
      log,
      metrics: metrics.get(),
      audits: audits.get(),
      guards: { breaker, permits },
    });
  });
  return { live, peppol, eori, evidence };
}

/** The answers to a client: validation (live and test mode), the monthly quota, the decide service. */
function wireAnswers(
  b: Base,
  part: MakePart,
  { rates, live, eori }: Pick<Basics, 'rates'> & Pick<Lookups, 'live' | 'eori'>,
) {
  const { config, db, clock } = b;
  const validation = part('validation', () => {
    const { liveAnswers } = live.get();
    const testAnswers = createTestModeAnswers({ clock });
    const service = createValidationService({
      rates: rates.get().service,
      clock,
      sources: { live: liveAnswers, test: testAnswers },
    });
    return { service, testAnswers };
  });
  const monthlyQuota = part('monthly-quota', () => {
    // Monthly quotas of keys; beyond one, a validation the cache answers is still served.
    const wouldBeCached = createCachedAnswerCheck({
      validation: validation.get().service,
      liveAnswers: live.get().liveAnswers,
    });
    return createMonthlyQuota({
      repository: createQuotaRepository(db.kysely),
      clock,
      planDefaults: config.keyMonthlyQuota,
      answeredFromCache: async (request) => {
        if (request.principal === null) return false;
        if (request.routeOptions.url === '/v1/validate')
          return wouldBeCached(request.query as ValidateQuery, request.principal.mode);
        if (request.routeOptions.url === '/v1/eori/:number' && request.principal.mode === 'live') {
          const { number } = request.params as { number?: string };
          const { cache } = request.query as { cache?: string };
          return number !== undefined && eori.get().wouldBeCached(number, cache !== 'false');
        }
        return false;
      },
    });
  });
  const decide = part('decide', () =>
    createDecideService({ validation: validation.get().service, rates: rates.get().service, clock }),
  );
  return { validation, monthlyQuota, decide };
}

/** What is told to others: webhooks and their worker, the outbox, the rates updates it announces. */
function wireDelivery(
  b: Base,
  part: MakePart,
  deps: Pick<Basics, 'rates' | 'audits' | 'events' | 'metrics'> & Pick<Lookups, 'live'>,
) {
  const { config, log, db, clock, ids, ports } = b;
  const { rates, audits, events, metrics, live } = deps;
  const webhooks = part('webhooks', () =>
    createWebhooksPart({ config, log, db, clock, ids, ports, metrics: metrics.get() }),
  );
  const webhookWorker = part('webhook-worker', () =>
    createWebhookWorker({
      log,
      webhooks: webhooks.get().service,
      ...(ports.timers ? { timers: ports.timers } : {}),
    }),
  );
  const outbox = part('outbox', () => {
    const { registryAnswers, liveAnswers } = live.get();
    return createOutbox({
      db: db.kysely,
      answers: {
        storeMany: (answers, trx) => registryAnswers.upsertMany(answers, trx),
        remember: (answers) => liveAnswers.remember(answers),
      },
      audits: audits.get(),
      events: events.get(),
      deliveries: {
        enqueueMany: (events, trx) => webhooks.get().service.enqueueMany(events, trx),
        enqueueBroadcasts: (events, trx) => webhooks.get().service.enqueueBroadcasts(events, trx),
        notify: () => webhookWorker.peek()?.notify(),
      },
      onCommit: metrics.get().observer.groupCommit,
    });
  });
  const ratesUpdates = part('rates-updates', () => {
    const { curated, overrides, service } = rates.get();
    const updates = createRatesUpdatesFor({
      config,
      log,
      db,
      clock,
      ids,
      curated,
      overrides,
      rates: service,
      outbox: outbox.get(),
      ...(ports.tedb ? { tedb: ports.tedb } : {}),
    });
    metrics.get().connectRates(() => updates.status());
    return updates;
  });
  return { webhooks, webhookWorker, outbox, ratesUpdates };
}

/** The work done later, by workers: batch jobs and monitors, and what runs them. */
function wireJobs(
  b: Base,
  part: MakePart,
  deps: Pick<Lookups, 'peppol'> &
    Pick<Answers, 'validation'> &
    Pick<Delivery, 'outbox'> &
    Pick<Administration, 'keys'>,
) {
  const { config, log, db, clock, ids, ports } = b;
  const base = { config, log, db, clock, ids, ports };
  const { peppol, validation, outbox, keys } = deps;
  const timers = ports.timers ? { timers: ports.timers } : {};
  const batch = part('batch', () =>
    createBatchPart({
      ...base,
      validation: validation.get().service,
      peppol: peppol.get().peppol,
      outbox: outbox.get(),
      keys: keys.get(),
      notify: () => batchWorker.peek()?.notify(),
    }),
  );
  const batchWorker = part('batch-worker', () =>
    createBatchWorker({ config, log, batch: batch.get(), ...timers }),
  );
  const monitors = part('monitors', () =>
    createMonitorsPart({
      ...base,
      validation: validation.get().service,
      peppol: peppol.get().peppol,
      testAnswers: validation.get().testAnswers,
      outbox: outbox.get(),
      keys: keys.get(),
      notify: () => monitorScheduler.peek()?.notify(),
    }),
  );
  const monitorScheduler = part('monitor-scheduler', () =>
    createMonitorScheduler({ config, log, monitors: monitors.get(), ...timers }),
  );
  return { batch, batchWorker, monitors, monitorScheduler };
}

/** What guards the routes: the public limit, key and admin authentication, recorded answers. */
function wireGuards(
  b: Base,
  part: MakePart,
  deps: Pick<Basics, 'playground' | 'audits'> & Pick<Delivery, 'outbox'> & Administration,
) {
  const { config, log, clock } = b;
  const { playground, audits, outbox, keys, administration } = deps;
  const publicLimiter = part('public-limiter', () =>
    createWindowLimiter({ max: config.publicRateLimitPerMinute, windowMs: 60_000, clock }),
  );
  const requireKey = part('require-key', () =>
    createAuth(keys.get(), playground.get(), administration.get().authFailures),
  );
  const requireAdmin = part('require-admin', () =>
    createAdminAuth(administration.get().admin, administration.get().authFailures),
  );
  const sendRecorded = part('send-recorded', () =>
    createResponseRecorder(outbox.get(), audits.get(), (error) =>
      log.error({ err: error }, 'could not mark an audit record as not delivered'),
    ),
  );
  return { publicLimiter, requireKey, requireAdmin, sendRecorded };
}
