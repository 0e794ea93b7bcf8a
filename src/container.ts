import { Redis } from 'ioredis';
import type { Config } from './config.js';
import { createDatabase, type Db } from './db/database.js';
import { createAuth, type RequireKey } from './http/auth.js';
import { type Clock, systemClock } from './lib/clock.js';
import { createIdGenerator, type IdGenerator } from './lib/ids.js';
import { createResponder, type Responder } from './http/respond.js';
import { createAuditsRepository } from './modules/audits/repository.js';
import { type AuditsService, createAuditsService } from './modules/audits/service.js';
import { createEventsRepository } from './modules/events/repository.js';
import { createEventsService, type EventsService } from './modules/events/service.js';
import { createKeysRepository } from './modules/keys/repository.js';
import { createKeysService, type KeysService } from './modules/keys/service.js';
import { loadRatesDataset, type RatesDataset } from './modules/rates/dataset.js';
import { createRatesService, type RatesService } from './modules/rates/service.js';

/** Side effects the container can be given instead of the real ones (tests, benchmarks). */
export interface Ports {
  db?: Db;
  clock?: Clock;
  ids?: IdGenerator;
  ratesDataset?: RatesDataset;
  redis?: Redis | null;
}

export interface Container {
  readonly config: Config;
  readonly db: Db;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly redis: Redis | null;
  readonly keys: KeysService;
  readonly rates: RatesService;
  readonly requireKey: RequireKey;
  readonly audits: AuditsService;
  readonly events: EventsService;
  /** Finishes audited calls: one transaction for the call's writes, its audit record and its event. */
  readonly respond: Responder;
  /** Releases every resource (database, Redis). */
  close(): Promise<void>;
}

/** The composition root: every service is created and wired here, once. */
export async function createContainer(config: Config, ports: Ports = {}): Promise<Container> {
  const db = ports.db ?? createDatabase(config.databaseUrl);
  await db.migrate();
  const clock = ports.clock ?? systemClock;
  const ids = ports.ids ?? createIdGenerator();
  const redis =
    ports.redis !== undefined
      ? ports.redis
      : config.redisUrl
        ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true })
        : null;

  const keys = createKeysService({ db: db.kysely, repository: createKeysRepository(db.kysely), clock, ids });
  const rates = createRatesService({
    dataset: ports.ratesDataset ?? loadRatesDataset(config.ratesPath),
    clock,
  });

  const audits = createAuditsService({ repository: createAuditsRepository(db.kysely), clock });
  const events = createEventsService({ repository: createEventsRepository(db.kysely), clock, ids });
  const respond = createResponder({ db, audits, events });

  return {
    config,
    db,
    clock,
    ids,
    redis,
    keys,
    rates,
    requireKey: createAuth(keys),
    audits,
    events,
    respond,
    async close() {
      if (redis) redis.disconnect();
      await db.close();
    },
  };
}
