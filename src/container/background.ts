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

/**
 * The service's periodic work besides the workers: retention purges, usage flushes, the instance
 * heartbeat, the signed evidence head in the log, and the VIES status poll. Returns the timers,
 * which the container clears on close.
 */
export function startBackground(deps: {
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
}): NodeJS.Timeout[] {
  const { config, log, redis, audits, admin, confirmations, monitors, batch, usage, ratesUpdates } = deps;
  const { liveAnswers, registries, instanceId, onDegraded } = deps.live;
  const statusService = deps.live.status;
  const registryConfig = config.registries;
  const timers: NodeJS.Timeout[] = [];
  // Retention: expired audit records, idempotency keys, monitor checks (and the demo key's
  // monitors), ended batch jobs and the admin audit log's old entries are purged hourly, in bounded
  // batches.
  const purge = () => {
    audits.purgeExpired().catch(() => {});
    confirmations.purgeExpiredIdempotencyKeys().catch(() => {});
    monitors
      .purgeHistory()
      .catch((error: unknown) => log.error({ err: error }, 'purging monitor checks failed'));
    monitors
      .purgePlayground()
      .catch((error: unknown) => log.error({ err: error }, "purging the demo key's monitors failed"));
    batch
      .purgeExpired()
      .catch((error: unknown) => log.error({ err: error }, 'purging ended batch jobs failed'));
    admin
      .purgeAuditLog()
      .catch((error: unknown) => log.error({ err: error }, 'purging the admin audit log failed'));
  };
  purge();
  timers.push(setInterval(purge, 3_600_000).unref());
  timers.push(
    setInterval(() => {
      usage.flush().catch((error: unknown) => log.error({ err: error }, 'writing usage counts failed'));
    }, USAGE_FLUSH_MS).unref(),
  );
  const beat = () => {
    statusService
      .heartbeat()
      .catch((error: unknown) => log.error({ err: error }, 'instance heartbeat failed'));
  };
  beat();
  timers.push(setInterval(beat, HEARTBEAT_MS).unref());
  // The rates sync runs on one instance at a time (the database lease); every instance reloads.
  let ratesBusy = false;
  const rates = async () => {
    if (ratesBusy) return;
    ratesBusy = true;
    try {
      await ratesUpdates.reload();
      await ratesUpdates.runIfDue();
    } catch (error) {
      log.error({ err: error }, 'rates update failed');
    } finally {
      ratesBusy = false;
    }
  };
  // The national registers' published files (SI, LV): each register's run is claimed when due (at
  // the first start on the database, then every OPENVAT_REGISTERS_SYNC_MS), by one instance at a time.
  let filesBusy = false;
  const registerFiles = async () => {
    if (filesBusy) return;
    filesBusy = true;
    try {
      for (const result of await deps.live.national.syncDue()) {
        if (!result.ok)
          log.warn({ register: result.source, parts: result.parts }, 'a register file sync failed');
      }
    } catch (error) {
      log.error({ err: error }, 'the register files sync failed');
    } finally {
      filesBusy = false;
    }
  };
  if (config.national.syncEveryMs > 0) {
    void registerFiles();
    const pollMs = Math.min(RATES_POLL_MS, config.national.syncEveryMs);
    timers.push(setInterval(() => void registerFiles(), pollMs).unref());
  }
  void rates();
  timers.push(setInterval(() => void rates(), RATES_POLL_MS).unref());
  if (config.evidenceKey) {
    // The signed chain head goes to the log at start and daily: a copy outside the database
    // that a later `openvat evidence verify --head` can be run against. The chain is verified
    // first and nothing is signed here; a head that does not verify stops confirmations (logged
    // by the confirmations service).
    const logHead = () => {
      confirmations.exportHead().then(
        (result) => {
          if (result?.ok) log.info({ evidence_head: result.head }, 'evidence chain head');
        },
        (error: unknown) => log.error({ err: error }, 'exporting the evidence chain head failed'),
      );
    };
    logHead();
    timers.push(setInterval(logHead, 86_400_000).unref());
  }
  if (deps.evidenceTimestamps.enabled) {
    // Trusted timestamps of the chain head: every instance asks whether a run is due (at most a
    // minute late); the run's lease lets one at a time ask an authority. Confirmations never wait.
    let stamping = false;
    const stamp = async () => {
      if (stamping) return;
      stamping = true;
      try {
        await deps.evidenceTimestamps.runIfDue();
      } catch (error) {
        log.error({ err: error }, 'time-stamping the evidence chain head failed');
      } finally {
        stamping = false;
      }
    };
    void stamp();
    timers.push(setInterval(() => void stamp(), Math.min(60_000, config.timestamps.intervalMs)).unref());
  }
  if (registryConfig.statusPollMs > 0) {
    // With Redis one instance at a time polls (a lock that expires before the next round); the
    // breakers it opens are shared, so every instance sees the result.
    const lockKey = `${config.redisPrefix}vies-status:lock`;
    const lockMs = Math.max(1_000, registryConfig.statusPollMs - 1_000);
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
    const run = () => {
      poll().catch(() => {});
    };
    run();
    timers.push(setInterval(run, registryConfig.statusPollMs).unref());
  }
  return timers;
}
