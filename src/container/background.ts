import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { AdminService } from '../modules/admin/service.js';
import type { AuditsService } from '../modules/audits/service.js';
import type { BatchService } from '../modules/batch/service.js';
import type { ConfirmationsService } from '../modules/confirmations/service.js';
import type { EvidenceTimestamps } from '../modules/evidence-timestamps/service.js';
import type { MonitorsService } from '../modules/monitors/service.js';
import type { RatesUpdates } from '../modules/rates/updates.js';
import { HEARTBEAT_MS } from '../modules/status/service.js';
import type { UsageService } from '../modules/usage/service.js';
import { withTimeout } from '../registries/resilience.js';
import type { LiveRegistries } from './live-registries.js';

/** How often the usage counts kept in memory are added to the database. */
const USAGE_FLUSH_MS = 5_000;
/**
 * How often an instance reloads the learnt rates (so what another instance learnt or an operator
 * decided is served everywhere) and asks whether the daily rates sync is due.
 */
export const RATES_POLL_MS = 60_000;

type BackgroundDeps = {
  config: Config;
  log: Logger;
  redis: Redis | null;
  live: LiveRegistries;
  audits: AuditsService;
  admin: AdminService;
  confirmations: ConfirmationsService;
  evidenceTimestamps: EvidenceTimestamps;
  monitors: MonitorsService;
  batch: BatchService;
  usage: UsageService;
  ratesUpdates: RatesUpdates;
};

/**
 * The service's periodic work besides the workers: retention purges, usage flushes, the instance
 * heartbeat, the signed evidence head in the log, and the VIES status poll. Returns the timers,
 * which the container clears on close.
 */
export function startBackground(deps: BackgroundDeps): NodeJS.Timeout[] {
  return [
    startPurges(deps),
    startUsageFlush(deps),
    startHeartbeat(deps),
    ...startRegisterFilesSync(deps),
    startRatesSync(deps),
    ...startEvidenceHeadLog(deps),
    ...startTimestamps(deps),
    ...startStatusPoll(deps),
  ];
}

/** Runs `run` now, then every `ms` (a timer that does not keep the process alive). */
function nowAndEvery(run: () => void, ms: number): NodeJS.Timeout {
  run();
  return setInterval(run, ms).unref();
}

/**
 * `task` as a call that starts it unless its previous run has not ended yet (then it does nothing),
 * and never rejects: an error goes to `onError`.
 */
function oneAtATime(task: () => Promise<void>, onError: (error: unknown) => void): () => void {
  let busy = false;
  return () => {
    if (busy) return;
    busy = true;
    task()
      .catch(onError)
      .finally(() => {
        busy = false;
      });
  };
}

/**
 * Retention: expired audit records, idempotency keys, monitor checks (and the demo key's monitors),
 * ended batch jobs and the admin audit log's old entries are purged hourly, in bounded batches.
 */
function startPurges(deps: BackgroundDeps): NodeJS.Timeout {
  const { log, audits, admin, confirmations, monitors, batch } = deps;
  const logged = (what: string) => (error: unknown) => log.error({ err: error }, `purging ${what} failed`);
  return nowAndEvery(() => {
    audits.purgeExpired().catch(() => {});
    confirmations.purgeExpiredIdempotencyKeys().catch(() => {});
    monitors.purgeHistory().catch(logged('monitor checks'));
    monitors.purgePlayground().catch(logged("the demo key's monitors"));
    batch.purgeExpired().catch(logged('ended batch jobs'));
    admin.purgeAuditLog().catch(logged('the admin audit log'));
  }, 3_600_000);
}

function startUsageFlush({ log, usage }: BackgroundDeps): NodeJS.Timeout {
  return setInterval(() => {
    usage.flush().catch((error: unknown) => log.error({ err: error }, 'writing usage counts failed'));
  }, USAGE_FLUSH_MS).unref();
}

function startHeartbeat({ log, live }: BackgroundDeps): NodeJS.Timeout {
  return nowAndEvery(() => {
    live.status.heartbeat().catch((error: unknown) => log.error({ err: error }, 'instance heartbeat failed'));
  }, HEARTBEAT_MS);
}

/**
 * The national registers' published files (SI, LV): each register's run is claimed when due (at
 * the first start on the database, then every OPENVAT_REGISTERS_SYNC_MS), by one instance at a time.
 */
function startRegisterFilesSync({ config, log, live }: BackgroundDeps): NodeJS.Timeout[] {
  if (config.national.syncEveryMs <= 0) return [];
  const registerFiles = oneAtATime(
    async () => {
      for (const result of await live.national.syncDue()) {
        if (!result.ok)
          log.warn({ register: result.source, parts: result.parts }, 'a register file sync failed');
      }
    },
    (error) => log.error({ err: error }, 'the register files sync failed'),
  );
  return [nowAndEvery(registerFiles, Math.min(RATES_POLL_MS, config.national.syncEveryMs))];
}

/** The rates sync runs on one instance at a time (the database lease); every instance reloads. */
function startRatesSync({ log, ratesUpdates }: BackgroundDeps): NodeJS.Timeout {
  const rates = oneAtATime(
    async () => {
      await ratesUpdates.reload();
      await ratesUpdates.runIfDue();
    },
    (error) => log.error({ err: error }, 'rates update failed'),
  );
  return nowAndEvery(rates, RATES_POLL_MS);
}

/**
 * The signed chain head goes to the log at start and daily: a copy outside the database that a
 * later `openvat evidence verify --head` can be run against. The chain is verified first and
 * nothing is signed here; a head that does not verify stops confirmations (logged by the
 * confirmations service).
 */
function startEvidenceHeadLog({ config, log, confirmations }: BackgroundDeps): NodeJS.Timeout[] {
  if (!config.evidenceKey) return [];
  const logHead = () => {
    confirmations.exportHead().then(
      (result) => {
        if (result?.ok) log.info({ evidence_head: result.head }, 'evidence chain head');
      },
      (error: unknown) => log.error({ err: error }, 'exporting the evidence chain head failed'),
    );
  };
  return [nowAndEvery(logHead, 86_400_000)];
}

/**
 * Trusted timestamps of the chain head: every instance asks whether a run is due (at most a minute
 * late); the run's lease lets one at a time ask an authority. Confirmations never wait.
 */
function startTimestamps({ config, log, evidenceTimestamps }: BackgroundDeps): NodeJS.Timeout[] {
  if (!evidenceTimestamps.enabled) return [];
  const stamp = oneAtATime(
    async () => {
      await evidenceTimestamps.runIfDue();
    },
    (error) => log.error({ err: error }, 'time-stamping the evidence chain head failed'),
  );
  return [nowAndEvery(stamp, Math.min(60_000, config.timestamps.intervalMs))];
}

/**
 * With Redis one instance at a time polls (a lock that expires before the next round); the
 * breakers it opens are shared, so every instance sees the result.
 */
function startStatusPoll({ config, redis, live }: BackgroundDeps): NodeJS.Timeout[] {
  const { statusPollMs } = config.registries;
  if (statusPollMs <= 0) return [];
  const { liveAnswers, registries, instanceId, onDegraded } = live;
  const lockKey = `${config.redisPrefix}vies-status:lock`;
  const lockMs = Math.max(1_000, statusPollMs - 1_000);
  const poll = async () => {
    if (redis) {
      try {
        if ((await withTimeout(redis.set(lockKey, instanceId, 'PX', lockMs, 'NX'), 1_000)) !== 'OK') return;
      } catch (error) {
        onDegraded(error);
      }
    }
    await liveAnswers.applyStatus(registries.viesStatus);
  };
  return [
    nowAndEvery(() => {
      poll().catch(() => {});
    }, statusPollMs),
  ];
}
