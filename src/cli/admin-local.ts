import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { refusalError } from '../http/refusals.js';
import type { Refusal } from '../lib/refusal.js';
import {
  type AccountFilter,
  ADMIN_PAGE,
  AdminApiError,
  type AdminOperations,
  type AdminTransport,
  adminOperations,
  everyPage,
  type KeyFilter,
} from './admin-api.js';
import { logOnFirstLine } from './command-log.js';
import { openExistingDatabase } from './database.js';

/**
 * The admin API's operations on DATABASE_URL, for a shell on the server, with the CLI as the actor:
 * a read calls the service function its route calls (`keys/manage`), a write goes through the admin
 * API's own routes run in-process (`admin-in-process.ts`: the same schemas, answers and audit log),
 * made on the first write. A read has nothing to check the routes would: its ids and filters are
 * checked by the command's parsers, as over `--url`. A change is told to the running instances
 * through Redis when `REDIS_URL` is set (they apply it at once); otherwise they apply it within
 * `OPENVAT_KEY_CACHE_MS`.
 */
export async function localAdmin(config: Config): Promise<AdminOperations> {
  const db = openExistingDatabase(config.databaseUrl);
  let redis: Redis | null = null;
  try {
    await db.migrate();
    if (config.redisUrl) redis = await redisOrWarning(config.redisUrl);
  } catch (error) {
    await db.close();
    throw error;
  }
  // The keys and administration parts alone (the same services as the admin API's): this process
  // answers no API request, so nothing else is made or loaded.
  const { createAdministrationContainer } = await import('../container/administration-only.js');
  const container = createAdministrationContainer(config, {
    db,
    redis,
    log: logOnFirstLine(config.logLevel),
  });
  const { admin, manageKeys: manage, ids } = container;
  const routes = madeOnFirstSend(`the database at DATABASE_URL (${db.describe})`, async () => {
    const { inProcessAdminRoutes } = await import('./admin-in-process.js');
    return inProcessAdminRoutes({ admin, manage, ids, logLevel: config.logLevel });
  });
  const writes = adminOperations(routes);

  async function listAccounts(filter: AccountFilter) {
    return everyPage((after) =>
      manage.listAccounts({ ...filter, ...(after ? { after } : {}), limit: ADMIN_PAGE }),
    );
  }
  async function getAccount(id: string) {
    const outcome = await manage.getAccount(id);
    if (outcome.kind !== 'ok') throw refused(outcome);
    return outcome.account;
  }
  async function listKeys(filter: KeyFilter) {
    return everyPage((after) =>
      manage.listKeys({ ...filter, ...(after ? { after } : {}), limit: ADMIN_PAGE }),
    );
  }
  async function getKey(id: string) {
    const outcome = await manage.getKey(id);
    if (outcome.kind !== 'ok') throw refused(outcome);
    return outcome.key;
  }
  async function close() {
    await routes.close();
    await container.close();
  }

  return { ...writes, listAccounts, getAccount, listKeys, getKey, close };
}

/** A refusal as the admin API answers it: the same status, code and message. */
function refused(refusal: Refusal): AdminApiError {
  const error = refusalError(refusal);
  return new AdminApiError(error.statusCode, error.code, error.message);
}

/** Redis at `url`, or null with a warning: the change is then applied within OPENVAT_KEY_CACHE_MS. */
async function redisOrWarning(url: string): Promise<Redis | null> {
  const { connectRedis } = await import('../container/redis.js');
  return connectRedis(url).catch((error: unknown) => {
    console.error(
      `openvat: warning: ${(error as Error).message} Running instances apply this change within OPENVAT_KEY_CACHE_MS.`,
    );
    return null;
  });
}

/** A transport made when the first request is sent (a command that only reads never makes it). */
function madeOnFirstSend(describe: string, make: () => Promise<AdminTransport>): AdminTransport {
  let made: Promise<AdminTransport> | undefined;
  function transport(): Promise<AdminTransport> {
    made ??= make();
    return made;
  }
  return {
    describe,
    send: async (request) => (await transport()).send(request),
    close: async () => {
      if (made) await (await made).close();
    },
  };
}
