/**
 * The national registers of the container: the clients of the registers chosen by
 * `OPENVAT_NATIONAL_FALLBACKS`, the fallback service over them (breakers, permits, coalescing and
 * quotas shared through Redis when it is configured), and the sync of the published files (SI, LV)
 * into their local copy in the database, on a schedule and by `openvat registers sync`.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { Metrics } from '../modules/metrics/service.js';
import { createNationalFallbacks, type NationalFallbacks } from '../modules/national/fallbacks.js';
import type { FileSource } from '../modules/national/index.js';
import {
  fileCopyView,
  type NationalFileCopyStatus,
  type NationalFilesView,
  type NationalRegisterStatus,
} from '../modules/national/index.js';
import { createLocalQuota, createSharedQuota } from '../modules/national/quota.js';
import {
  createNationalFileRepository,
  createNationalFileSyncsRepository,
} from '../modules/national/repository.js';
import { createNationalClients } from '../registries/national-index.js';
import type { NationalSource } from '../registries/national-port.js';
import {
  type BreakerStore,
  type Coalescer,
  createCoalescer,
  createPermits,
  createSharedCoalescer,
  type RedisLike,
} from '../registries/resilience.js';
import { createNationalFileSync, type NationalFileSyncRun } from './national-files.js';

export interface NationalRegisters {
  readonly fallbacks: NationalFallbacks;
  /** The file registers chosen (`si_furs`, `lv_vid`), whose files are synced. */
  readonly fileSources: readonly FileSource[];
  /** Syncs the published files of the chosen file registers (or of `only`) now, whatever the schedule. */
  syncFiles(only?: readonly FileSource[]): Promise<NationalFileSyncRun[]>;
  /** The scheduled sync: each file register whose run is due and not held by another instance. */
  syncDue(): Promise<NationalFileSyncRun[]>;
  /** Each file register's copy as held in the database. */
  files(): Promise<NationalFileCopyStatus[]>;
  /** Each register asked as a fallback, for `GET /v1/status`. */
  status(): Promise<NationalRegisterStatus[]>;
}

export function createNationalRegisters(deps: {
  config: Config;
  log: Logger;
  db: Db;
  /** Who holds a sync run's lease: this instance. */
  workerId: string;
  clock: Clock;
  redis: Redis | null;
  metrics: Metrics;
  breaker: BreakerStore;
  onDegraded: (error: unknown) => void;
}): NationalRegisters {
  const { config, clock, redis } = deps;
  const national = config.national;
  const on = new Set(national.enabled);
  // The files' local copy is in the database: every instance answers from it, a restart keeps it.
  const index = createNationalFileRepository(deps.db.kysely);
  const timeoutMs = national.timeoutMs;
  const now = () => clock.now();
  const clients = createNationalClients({
    ...(on.has('pl_whitelist') ? { pl: { baseUrl: national.plUrl, timeoutMs } } : {}),
    ...(on.has('cz_adis') ? { cz: { url: national.czUrl, timeoutMs } } : {}),
    ...(on.has('ro_anaf') ? { ro: { baseUrl: national.roUrl, timeoutMs } } : {}),
    ...(on.has('fi_prh') ? { fi: { baseUrl: national.fiUrl, timeoutMs } } : {}),
    ...(on.has('sk_financnasprava') && national.skKey
      ? { sk: { baseUrl: national.skUrl, apiKey: national.skKey, timeoutMs } }
      : {}),
    ...(on.has('si_furs') ? { si: { index, maxAgeDays: national.maxAgeDays } } : {}),
    ...(on.has('lv_vid') ? { lv: { index, maxAgeDays: national.maxAgeDays } } : {}),
    now,
  });
  const shared = redis
    ? { redis: redis as unknown as RedisLike, prefix: config.redisPrefix, onDegraded: deps.onDegraded }
    : null;
  const list = Object.values(clients.bySource);
  const concurrency = new Map(list.map((client) => [`national:${client.source}`, client.limits.concurrency]));
  const permits = createPermits({
    limitFor: (key) => concurrency.get(key) ?? config.registries.concurrencyPerCountry,
    ...(shared ? { shared: { ...shared, leaseMs: config.permitLeaseMs, instances: () => null } } : {}),
  });
  const coalescer: Coalescer = shared
    ? createSharedCoalescer({
        ...shared,
        lockMs: timeoutMs + 1_000,
        encode: (value) => JSON.stringify(value),
        decode: (text) => {
          const value = JSON.parse(text) as { kind: string; result?: { checkedAt?: string | Date } };
          if (value.result && typeof value.result.checkedAt === 'string')
            value.result.checkedAt = new Date(value.result.checkedAt);
          return value;
        },
      })
    : createCoalescer();
  const fallbacks = createNationalFallbacks({
    clients: list,
    breaker: deps.breaker,
    permits,
    coalescer,
    quota: shared
      ? createSharedQuota({ ...shared, now: () => clock.millis() })
      : createLocalQuota({ now: () => clock.millis() }),
    timeoutMs,
    now,
    observer: deps.metrics.observer,
  });
  const fileSync = createNationalFileSync({
    config,
    clock,
    index,
    syncs: createNationalFileSyncsRepository(deps.db.kysely, deps.db.dialect),
    workerId: deps.workerId,
  });
  const { files } = fileSync;

  async function status(): Promise<NationalRegisterStatus[]> {
    const breakers = new Map((await deps.breaker.snapshot()).map((view) => [view.key, view]));
    const held = new Map<NationalSource, NationalFileCopyStatus>(
      (await files()).map((entry) => [entry.source, entry]),
    );
    return list.map((client) => {
      const view = breakers.get(`national:${client.source}`);
      const activity = fallbacks.activity(client.source);
      const copy = held.get(client.source);
      const checks = copy?.parts.map((part) => part.checkedAt.toISOString()).sort() ?? [];
      return {
        source: client.source,
        country: client.country,
        breaker: view?.phase ?? 'closed',
        retry_after_seconds: view?.retryAfterSeconds ?? null,
        last_answer_at: activity.lastAnswerAt,
        last_failure_at: activity.lastFailureAt,
        last_failure: activity.lastFailure,
        data_date: copy?.dataDate ?? null,
        files_checked_at: checks[0] ?? null,
        files: copy ? filesView(copy) : null,
      };
    });
  }

  return {
    fallbacks,
    fileSources: fileSync.fileSources,
    syncFiles: fileSync.syncNow,
    syncDue: fileSync.syncDue,
    files,
    status,
  };
}

function filesView(copy: NationalFileCopyStatus): NationalFilesView {
  const { source: _source, data_date: _date, ...view } = fileCopyView(copy);
  return view;
}
