import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { systemClock } from '../lib/clock.js';
import { createIdGenerator } from '../lib/ids.js';
import { wireAdministration } from './administration.js';
import { createParts } from './part.js';
import type { Ports } from './types.js';

/**
 * The keys and administration parts alone, for a command that manages keys and accounts on the
 * database (`openvat keys`, `openvat accounts`): the same parts, made the same way, as the
 * service's (`createCoreContainer`), without loading the modules of the rest of the service. The
 * database is given migrated.
 */
export function createAdministrationContainer(
  config: Config,
  ports: Pick<Ports, 'clock' | 'ids' | 'keySecrets'> & {
    db: Db;
    log: Pick<Logger, 'debug' | 'warn'>;
    redis: Redis | null;
  },
) {
  const { db, log, redis } = ports;
  const clock = ports.clock ?? systemClock;
  const ids = ports.ids ?? createIdGenerator();
  const { part } = createParts(log);
  const { keys, administration } = wireAdministration({ config, log, db, clock, ids, redis, ports }, part);

  /** Releases what was made: the key changes' channel, Redis and the database. */
  async function close(): Promise<void> {
    administration.peek()?.keyPropagation.close();
    if (redis) redis.disconnect();
    await db.close();
  }

  return {
    ids,
    get keys() {
      return keys.get();
    },
    get admin() {
      return administration.get().admin;
    },
    get manageKeys() {
      return administration.get().manageKeys;
    },
    close,
  };
}
