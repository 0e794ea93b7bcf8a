import { pino } from 'pino';
import { type Config, DEFAULT_DATABASE_URL } from '../config.js';
import { createDatabase, type Db } from '../db/database.js';
import { systemClock } from '../lib/clock.js';
import { createIdGenerator } from '../lib/ids.js';
import { startBackground } from './background.js';
import { createParts } from './part.js';
import { connectRedis } from './redis.js';
import type { Container, Ports } from './types.js';
import { wireParts } from './wiring.js';

function openDatabase(config: Config, log: Container['log']): Db {
  return createDatabase(config.databaseUrl, {
    // A new SQLite database where the operator clearly asked for one: the default path (with its
    // directory), or a directory that exists (see `createDatabase`).
    createDirectory: config.databaseUrl === DEFAULT_DATABASE_URL,
    poolSize: config.postgres.poolSize,
    statementTimeoutMs: config.postgres.statementTimeoutMs,
    onConnectionError: (error) =>
      log.warn({ err: error }, 'PostgreSQL ended an idle connection; the pool opens a new one on next use'),
  });
}

/**
 * The composition root: every service is wired here, and each part is made the first time
 * something asks for it. Only the database (migrated), the clock, the ids and the Redis connection
 * are made at once; a command that lists keys makes the keys and administration parts and nothing
 * else. `createContainer` (`src/container.ts`) makes what a running service needs up front.
 */
export async function createCoreContainer(config: Config, ports: Ports = {}): Promise<Container> {
  const log = ports.log ?? pino({ level: config.logLevel });
  const db = ports.db ?? openDatabase(config, log);
  await db.migrate();
  const clock = ports.clock ?? systemClock;
  const ids = ports.ids ?? createIdGenerator();
  const redis =
    ports.redis !== undefined ? ports.redis : config.redisUrl ? await connectRedis(config.redisUrl) : null;
  const { part } = createParts(log);

  const {
    keys,
    administration,
    playground,
    usage,
    rates,
    audits,
    events,
    metrics,
    live,
    validation,
    monthlyQuota,
    decide,
    peppol,
    eori,
    evidence,
    webhooks,
    webhookWorker,
    outbox,
    ratesUpdates,
    batch,
    batchWorker,
    monitors,
    monitorScheduler,
    publicLimiter,
    requireKey,
    requireAdmin,
    sendRecorded,
  } = wireParts({ config, log, db, clock, ids, redis, ports }, part);
  const timers: NodeJS.Timeout[] = [];

  /** Starts the background work of a running service: the workers, polls, purges and the rates sync. */
  function start(): void {
    webhookWorker.get().start();
    batchWorker.get().start();
    monitorScheduler.get().start();
    const { confirmations, evidenceTimestamps } = evidence.get();
    timers.push(
      ...startBackground({
        config,
        log,
        redis,
        live: live.get(),
        audits: audits.get(),
        admin: administration.get().admin,
        confirmations,
        evidenceTimestamps,
        monitors: monitors.get(),
        batch: batch.get(),
        usage: usage.get(),
        ratesUpdates: ratesUpdates.get(),
      }),
    );
  }

  /** Stops what was started and releases what was made (workers, transport, Redis, the database). */
  async function close(): Promise<void> {
    await monitorScheduler.peek()?.stop();
    await batchWorker.peek()?.stop();
    await webhookWorker.peek()?.stop();
    webhooks.peek()?.transport.close();
    for (const timer of timers.splice(0)) clearInterval(timer);
    await usage
      .peek()
      ?.flush()
      .catch((error: unknown) => log.error({ err: error }, 'writing usage counts failed'));
    await live
      .peek()
      ?.status.stop()
      .catch(() => {});
    live.peek()?.permits.close();
    administration.peek()?.keyPropagation.close();
    if (redis) redis.disconnect();
    await db.close();
  }

  return {
    config,
    log,
    db,
    clock,
    ids,
    redis,
    get keys() {
      return keys.get();
    },
    get rates() {
      return rates.get().service;
    },
    get ratesUpdates() {
      return ratesUpdates.get();
    },
    get publicLimiter() {
      return publicLimiter.get();
    },
    get playground() {
      return playground.get();
    },
    get requireKey() {
      return requireKey.get();
    },
    get admin() {
      return administration.get().admin;
    },
    get manageKeys() {
      return administration.get().manageKeys;
    },
    get keyPropagation() {
      return administration.get().keyPropagation;
    },
    get monthlyQuota() {
      return monthlyQuota.get();
    },
    get requireAdmin() {
      return requireAdmin.get();
    },
    get authFailures() {
      return administration.get().authFailures;
    },
    get audits() {
      return audits.get();
    },
    get events() {
      return events.get();
    },
    get outbox() {
      return outbox.get();
    },
    get sendRecorded() {
      return sendRecorded.get();
    },
    get validation() {
      return validation.get().service;
    },
    get decide() {
      return decide.get();
    },
    get peppol() {
      return peppol.get().peppol;
    },
    get eori() {
      return eori.get().eori;
    },
    get eoriAnswers() {
      return eori.get().eoriAnswers;
    },
    get liveAnswers() {
      return live.get().liveAnswers;
    },
    get national() {
      return live.get().national;
    },
    get status() {
      return live.get().status;
    },
    registryStatus: () => live.get().status.snapshot(),
    get metrics() {
      return metrics.get();
    },
    get confirmations() {
      return evidence.get().confirmations;
    },
    get evidenceTimestamps() {
      return evidence.get().evidenceTimestamps;
    },
    get proofs() {
      return evidence.get().proofs;
    },
    get usage() {
      return usage.get();
    },
    get webhooks() {
      return webhooks.get().service;
    },
    get webhookWorker() {
      return webhookWorker.get();
    },
    get batch() {
      return batch.get();
    },
    get batchWorker() {
      return batchWorker.get();
    },
    get monitors() {
      return monitors.get();
    },
    get monitorScheduler() {
      return monitorScheduler.get();
    },
    start,
    close,
  };
}
