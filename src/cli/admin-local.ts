import Fastify, { type FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import type { Config } from '../config.js';
import { connectRedis } from '../container/redis.js';
import { registerErrorHandling } from '../http/errors.js';
import { AJV_OPTIONS, ErrorEnvelope } from '../http/schemas.js';
import { systemClock } from '../lib/clock.js';
import { createIdGenerator } from '../lib/ids.js';
import { createAdminRepository } from '../modules/admin/repository.js';
import { adminRoutes } from '../modules/admin/routes.js';
import type { AdminPrincipal } from '../modules/admin/service.js';
import { createAdminService } from '../modules/admin/service.js';
import { createKeyManagement } from '../modules/keys/manage.js';
import { createKeyPropagation } from '../modules/keys/propagation.js';
import { createQuotaRepository } from '../modules/keys/quota-repository.js';
import { createKeysRepository } from '../modules/keys/repository.js';
import { type AdminBackend, pathWithQuery } from './admin-api.js';
import { cliActor } from './cli-actor.js';
import { openExistingDatabase } from './database.js';

/**
 * The admin API run in-process on DATABASE_URL, for a shell on the server: the same routes, schemas,
 * service functions and audit log as the service's `/admin/v1`, with the CLI as the actor. A change
 * is told to the running instances through Redis when `REDIS_URL` is set (they apply it at once);
 * otherwise they apply it within `OPENVAT_KEY_CACHE_MS`.
 */
export async function localAdminBackend(config: Config): Promise<AdminBackend> {
  const db = openExistingDatabase(config.databaseUrl);
  let redis: Redis | null = null;
  try {
    await db.migrate();
    if (config.redisUrl) {
      redis = await connectRedis(config.redisUrl).catch((error: unknown) => {
        console.error(
          `openvat: warning: ${(error as Error).message} Running instances apply this change within OPENVAT_KEY_CACHE_MS.`,
        );
        return null;
      });
    }
  } catch (error) {
    await db.close();
    throw error;
  }
  const log = pino({ level: config.logLevel }, pino.destination(2));
  const ids = createIdGenerator();
  const propagation = createKeyPropagation({
    // This process answers no API request: nothing of its own to forget.
    keys: { forget: () => {} },
    redis,
    redisPrefix: config.redisPrefix,
    onError: (error) =>
      console.error(
        `openvat: warning: cannot tell the running instances through Redis (${(error as Error).message}); they apply this change within OPENVAT_KEY_CACHE_MS.`,
      ),
  });
  const admin = createAdminService({
    repository: createAdminRepository(db.kysely),
    clock: systemClock,
    ids,
    auditRetentionDays: config.admin.auditRetentionDays,
  });
  const manage = createKeyManagement({
    db: db.kysely,
    repository: createKeysRepository(db.kysely),
    quotas: { repository: createQuotaRepository(db.kysely), planDefaults: config.keyMonthlyQuota },
    clock: systemClock,
    ids,
    announce: (change) => propagation.announce(change),
  });
  const { id, name, role } = cliActor();
  const principal: AdminPrincipal = { id, name, role };
  const app = Fastify({ logger: false, genReqId: () => ids.uuid(), ajv: { customOptions: AJV_OPTIONS } });
  app.decorateRequest('startedAt', 0);
  app.addHook('onRequest', (request, _reply, done) => {
    request.startedAt = performance.now();
    done();
  });
  registerErrorHandling(app, log);
  app.addSchema(ErrorEnvelope);
  await app.register(
    adminRoutes({
      admin,
      manage,
      // The operator at the server's shell may do everything: the database is at hand anyway.
      requireAdmin: () => async (request: FastifyRequest) => {
        request.admin = principal;
      },
      // This process serves no API request: it has no usage counts of its own to write.
      flushUsage: async () => {},
    }),
  );
  await app.ready();
  return {
    describe: `the database at DATABASE_URL (${db.describe})`,
    async send(request) {
      const res = await app.inject({
        method: request.method,
        url: pathWithQuery(request),
        ...(request.body === undefined ? {} : { payload: request.body as object }),
      });
      let body: unknown = null;
      try {
        body = res.json();
      } catch {
        // not JSON: reported by the client
      }
      return { status: res.statusCode, body };
    },
    async close() {
      await app.close();
      redis?.disconnect();
      await db.close();
    },
  };
}
