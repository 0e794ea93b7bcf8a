import Fastify, { type FastifyRequest } from 'fastify';
import { pino } from 'pino';
import { registerErrorHandling } from '../http/errors.js';
import { lazySchemaController } from '../http/lazy-compilers.js';
import { AJV_OPTIONS, ErrorEnvelope } from '../http/schemas.js';
import type { IdGenerator } from '../lib/ids.js';
import { adminRoutes } from '../modules/admin/routes.js';
import type { AdminPrincipal, AdminService } from '../modules/admin/service.js';
import type { KeyManagement } from '../modules/keys/index.js';
import { type AdminTransport, pathWithQuery } from './admin-api.js';
import { cliActor } from './cli-actor.js';

/**
 * The admin API's routes run in-process, for the writes of a command on DATABASE_URL: the same
 * routes, schemas, service functions and audit log as the service's `/admin/v1`, with the CLI as
 * the actor. Only the routes a command uses have their schemas compiled.
 */
export async function inProcessAdminRoutes(deps: {
  admin: AdminService;
  manage: KeyManagement;
  ids: IdGenerator;
  logLevel: string;
}): Promise<AdminTransport> {
  const { admin, manage, ids } = deps;
  const log = pino({ level: deps.logLevel }, pino.destination(2));
  const { id, name, role } = cliActor();
  const principal: AdminPrincipal = { id, name, role };
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

  async function send(request: Parameters<AdminTransport['send']>[0]) {
    const res = await app.inject({
      method: request.method,
      url: pathWithQuery(request),
      ...(request.body === undefined ? {} : { payload: request.body as object }),
    });
    let body: unknown = null;
    try {
      body = res.json();
    } catch {
      // not JSON: reported by the operations
    }
    return { status: res.statusCode, body };
  }

  return { describe: 'the admin routes in-process', send, close: () => app.close() };
}
