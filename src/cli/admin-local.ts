import Fastify, { type FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import type { Config } from '../config.js';
import { connectRedis } from '../container/redis.js';
import { registerErrorHandling } from '../http/errors.js';
import { lazySchemaController } from '../http/lazy-compilers.js';
import { AJV_OPTIONS, ErrorEnvelope } from '../http/schemas.js';
import { adminRoutes } from '../modules/admin/routes.js';
import type { AdminPrincipal } from '../modules/admin/service.js';
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
  // The keys and administration parts alone (the same services as the admin API's): this process
  // answers no API request, so nothing else is made or loaded.
  const { createAdministrationContainer } = await import('../container/administration-only.js');
  const container = createAdministrationContainer(config, { db, redis, log });
  const { admin, manageKeys: manage, ids } = container;
  const { id, name, role } = cliActor();
  const principal: AdminPrincipal = { id, name, role };
  // A command sends one or two requests: only the routes it uses have their schemas compiled.
  const app = Fastify({
    logger: false,
    genReqId: () => ids.uuid(),
    // The same validation of what a request carries; without Ajv's check of each schema itself
    // against the JSON Schema meta-schema, which compiles the meta-schema first (45 ms of a 650 ms
    // `keys list` profiled with --cpu-prof on Node 24). They are the service's own schemas, checked
    // so when the service compiles them, and every route's by the contract tests.
    ajv: { customOptions: { ...AJV_OPTIONS, validateSchema: false } },
    schemaController: lazySchemaController(),
  });
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
      await container.close();
    },
  };
}
