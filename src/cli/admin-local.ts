import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { refusalError } from '../http/refusals.js';
import type { Refusal } from '../lib/refusal.js';
import type { AccountPatch, KeySettings } from '../modules/keys/index.js';
import {
  type AccountFilter,
  type AccountInput,
  ADMIN_PAGE,
  AdminApiError,
  type AdminOperations,
  everyPage,
  type KeyFilter,
  type KeyInput,
} from './admin-api.js';
import { cliActor } from './cli-actor.js';
import { logOnFirstLine } from './command-log.js';
import { openExistingDatabase } from './database.js';

/**
 * The admin API's operations on DATABASE_URL, for a shell on the server: each calls the service
 * function its route calls (`keys/manage`), with the CLI as the actor in the audit log, and answers
 * the same records and refusals. What a route's schemas check of a request, the command's parsers
 * have checked before (`admin-flags.ts`; the tests run every limit against both). A change is told to
 * the running instances through Redis when `REDIS_URL` is set (they apply it at once); otherwise they
 * apply it within `OPENVAT_KEY_CACHE_MS`.
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
  const { admin, manageKeys: manage } = container;
  const record = admin.recorder(cliActor());

  async function listAccounts(filter: AccountFilter) {
    return everyPage((after) => manage.listAccounts({ ...filter, ...pageAfter(after) }));
  }
  async function getAccount(id: string) {
    return accepted(await manage.getAccount(id)).account;
  }
  async function createAccount(input: AccountInput) {
    return manage.createAccount(input, record);
  }
  async function updateAccount(id: string, patch: AccountPatch) {
    return accepted(await manage.updateAccount(id, patch, record)).account;
  }
  async function listKeys(filter: KeyFilter) {
    return everyPage((after) => manage.listKeys({ ...filter, ...pageAfter(after) }));
  }
  async function getKey(id: string) {
    return accepted(await manage.getKey(id)).key;
  }
  async function createKey(input: KeyInput) {
    const { key, secret } = accepted(await manage.createKey(input, record));
    return { ...key, key: secret };
  }
  async function updateKey(id: string, patch: KeySettings) {
    return accepted(await manage.updateKey(id, patch, record)).key;
  }
  async function revokeKey(id: string) {
    return accepted(await manage.revokeKey(id, record)).key;
  }
  async function rollKey(id: string, overlapSeconds: number) {
    const { key, secret } = accepted(await manage.rollKey(id, overlapSeconds, record));
    return { ...key, key: secret };
  }

  return {
    describe: `the database at DATABASE_URL (${db.describe})`,
    listAccounts,
    getAccount,
    createAccount,
    updateAccount,
    listKeys,
    getKey,
    createKey,
    updateKey,
    revokeKey,
    rollKey,
    close: () => container.close(),
  };
}

/** A page of a list as the service functions read it: the largest, after the cursor given. */
function pageAfter(after: string | undefined): { after?: string; limit: number } {
  return after ? { after, limit: ADMIN_PAGE } : { limit: ADMIN_PAGE };
}

/** The outcome of a service function, or its refusal thrown as the admin API answers it. */
function accepted<T extends { kind: 'ok' }>(outcome: T | Refusal): T {
  if (outcome.kind === 'ok') return outcome as T;
  const error = refusalError(outcome as Refusal);
  throw new AdminApiError(error.statusCode, error.code, error.message);
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
