import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { IdGenerator } from '../lib/ids.js';
import { createAdminRepository } from '../modules/admin/repository.js';
import { createAdminService } from '../modules/admin/service.js';
import { createAuthFailures } from '../modules/keys/auth-failures.js';
import { createKeyManagement } from '../modules/keys/manage.js';
import { createKeyPropagation, type KeyPropagation } from '../modules/keys/propagation.js';
import { createQuotaRepository } from '../modules/keys/quota-repository.js';
import { createKeysRepository } from '../modules/keys/repository.js';
import { createKeysService, type KeysService } from '../modules/keys/service.js';
import type { MakePart } from './part.js';

/**
 * The administration of keys: the limit on failed authentications, key changes told to every
 * instance (Redis pub/sub), admin keys with the audit log, and accounts and keys as the admin API
 * manages them. Nothing is subscribed here: a running service calls `startKeyPropagation` (a
 * command that only changes keys has nothing to hear).
 */
export function createKeyAdministration(deps: {
  config: Config;
  /** Where the parts warn that Redis is unavailable. */
  log: Pick<Logger, 'warn'>;
  db: Db;
  clock: Clock;
  ids: IdGenerator;
  redis: Redis | null;
  keys: KeysService;
  /** The container's ports: `keySecrets` makes the random part of new keys. */
  ports: { keySecrets?: () => string };
}) {
  const { config, log, db, clock, ids, redis, keys } = deps;
  const secrets = deps.ports.keySecrets ? { secrets: deps.ports.keySecrets } : {};
  const authFailures = createAuthFailures({
    max: config.authFailuresPerMinute,
    clock,
    redis,
    redisPrefix: config.redisPrefix,
    onError: (error) =>
      log.warn({ err: error }, 'failed authentications: Redis unavailable, counting locally'),
  });
  const keyPropagation = createKeyPropagation({
    keys,
    redis,
    redisPrefix: config.redisPrefix,
    onError: (error) => log.warn({ err: error }, 'key changes: Redis unavailable'),
  });
  const admin = createAdminService({
    repository: createAdminRepository(db.kysely),
    clock,
    ids,
    auditRetentionDays: config.admin.auditRetentionDays,
    ...secrets,
  });
  const quotaRepository = createQuotaRepository(db.kysely);
  const manageKeys = createKeyManagement({
    db: db.kysely,
    repository: createKeysRepository(db.kysely),
    quotas: { repository: quotaRepository, planDefaults: config.keyMonthlyQuota },
    clock,
    ids,
    announce: (change) => keyPropagation.announce(change),
    ...secrets,
  });
  return { authFailures, keyPropagation, admin, manageKeys };
}

/** The keys and administration parts, from what every part is made from. */
export function wireAdministration(
  b: Omit<Parameters<typeof createKeyAdministration>[0], 'keys'>,
  part: MakePart,
) {
  const { config, db, clock, ids, ports } = b;
  const keys = part('keys', () =>
    createKeysService({
      db: db.kysely,
      repository: createKeysRepository(db.kysely),
      clock,
      ids,
      cacheMs: config.keyCacheMs,
      ...(ports.keySecrets ? { secrets: ports.keySecrets } : {}),
    }),
  );
  const administration = part('administration', () => createKeyAdministration({ ...b, keys: keys.get() }));
  return { keys, administration };
}

/** Subscribes to the other instances' key changes; without it they still apply within OPENVAT_KEY_CACHE_MS. */
export async function startKeyPropagation(keyPropagation: KeyPropagation, log: Logger): Promise<void> {
  await keyPropagation
    .start()
    .catch((error: unknown) =>
      log.warn(
        { err: error },
        "key changes: cannot subscribe in Redis; other instances' changes apply within OPENVAT_KEY_CACHE_MS",
      ),
    );
}
