import type { Socket } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { MODULES } from './app/modules.js';
import type { Container } from './container.js';
import { clientAddress } from './http/client-address.js';
import { frameworkErrorHandler, registerErrorHandling } from './http/errors.js';
import { registerJsonBody } from './http/json-body.js';
import { lazySerializers } from './http/lazy-serializers.js';
import { serializeRequest } from './http/log-redaction.js';
import type { RouteContext, Surface } from './http/module.js';
import { registerOpenApi } from './http/openapi.js';
import { registerRequestHooks } from './http/request-hooks.js';
import { type RouteEntry as AnyRouteEntry, recordRoutes } from './http/route-table.js';
import { AJV_OPTIONS, ErrorEnvelope } from './http/schemas.js';
import { serverWithFastPath } from './http/server.js';
import { clientErrorResponse, serverLimits } from './http/server-limits.js';
import { adminRoleOf } from './modules/admin/index.js';
import { guidesIndex, loadGuides } from './modules/guides/routes.js';
import { authenticatedOperation } from './modules/keys/auth.js';
import type { Operation } from './modules/keys/plans.js';
import { createRouteGuards } from './modules/keys/route-guards.js';
import { PLAYGROUND_KEY, playgroundIntro } from './modules/playground/playground.js';
import { ratesFastPath } from './modules/rates/routes.js';

/** A route as registered: what the authorization matrix and the fuzzing suite are generated from. */
export type RouteEntry = AnyRouteEntry<Operation>;

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered on the app, in registration order. */
    routeTable: readonly RouteEntry[];
  }
}

/**
 * Builds the Fastify application from a container. Does not listen. `surface` says which routes it
 * serves: by default the public API, with the admin API and console too unless they have a listener
 * of their own (`OPENVAT_ADMIN_PORT`); `admin`: those alone, for that listener. The routes are the
 * modules' registrations (`src/app/modules.ts`), walked in order.
 */
export async function buildApp(
  container: Container,
  options: { surface?: 'default' | 'admin' } = {},
): Promise<FastifyInstance> {
  const surface = options.surface ?? 'default';
  const servesPublic = surface === 'default';
  const servesAdmin = surface === 'admin' || container.config.admin.listener === null;
  const serves = (of: Surface) => of === 'every' || (of === 'public' ? servesPublic : servesAdmin);
  const context: RouteContext = { adminAlone: !servesPublic };
  const { config, log } = container;
  let closing = false;
  const app = createFastify(container, { servesPublic, closing: () => closing });

  // Connections beyond the cap are closed by Node as soon as they are accepted.
  if (config.connections.maxConnections > 0) app.server.maxConnections = config.connections.maxConnections;
  registerRequestHooks(app, { onClosing: () => (closing = true) });
  registerJsonBody(app);
  registerErrorHandling(app, log);

  const modules = MODULES.filter((module) => serves(module.surface));
  for (const module of modules.filter((m) => m.scope === 'root')) {
    await module.routes(container, context)?.(app);
  }
  app.addSchema(ErrorEnvelope);
  for (const schema of MODULES.flatMap((module) => module.schemas ?? [])) app.addSchema(schema);
  if (servesPublic)
    await registerOpenApi(app, {
      playground: container.playground ? { key: PLAYGROUND_KEY, intro: playgroundIntro() } : null,
      // The pages of docs/, served under /guides/ and listed in the description `/docs` shows.
      description: guidesIndex(loadGuides()),
    });

  // Authenticated routes are limited per API key, by plan, and count their answers per key and
  // operation (the usage report); the limit runs after authentication.
  const { guard } = createRouteGuards({
    perMinute: config.keyRateLimitPerMinute,
    clock: container.clock,
    redis: container.redis,
    redisPrefix: config.redisPrefix,
    monthlyQuota: container.monthlyQuota,
    usage: container.usage,
    log,
  });
  app.decorate('routeTable', recordRoutes(app, { operationOf: authenticatedOperation, adminRoleOf, guard }));

  for (const module of modules.filter((m) => m.scope !== 'root')) {
    const routes = module.routes(container, context);
    if (routes) await app.register(routes);
  }
  return app;
}

/**
 * Fastify with the service's options. Today's rates of one country are answered before the
 * framework when no request log needs writing (see `ratesFastPath`); the route answers them
 * otherwise, and every other case. Only on the public API: an admin listener of its own serves no
 * rates.
 */
function createFastify(
  container: Container,
  options: { servesPublic: boolean; closing: () => boolean },
): FastifyInstance {
  const { config, ids, log } = container;
  // Fastify's request logging (a line per request at `info`) is given the service logger only when
  // that level is on. Otherwise Fastify runs without a logger: with one, it tracks every response's
  // end with listeners, which costs cheap answers (rates, health) about a third of their throughput.
  // Errors are logged by the error handler through the service logger either way.
  const requestLogging = log.isLevelEnabled('info');
  // The client address behind trusted proxies (OPENVAT_TRUST_PROXY): per-IP limits and logs use it.
  const client = clientAddress(config.trustProxy);
  const fastPath =
    requestLogging || !options.servesPublic
      ? null
      : ratesFastPath({
          rates: container.rates,
          limiter: container.publicLimiter,
          ids,
          closing: options.closing,
          clientAddress: client.address,
        });
  return Fastify({
    ...(requestLogging
      ? { loggerInstance: log.child({}, { serializers: { req: serializeRequest } }) as FastifyBaseLogger }
      : { logger: false }),
    ...(fastPath ? { serverFactory: serverWithFastPath(fastPath) } : {}),
    trustProxy: client.trustProxy,
    genReqId: () => ids.uuid(),
    requestIdHeader: false,
    bodyLimit: config.bodyLimit,
    ...serverLimits(config),
    routerOptions: { maxParamLength: 256 },
    return503OnClosing: true,
    frameworkErrors: frameworkErrorHandler,
    ajv: { customOptions: AJV_OPTIONS },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers() } },
    clientErrorHandler(error, socket: Socket) {
      // Destroyed once the answer is flushed: ending only our side would leave the socket open for
      // as long as a client that never closes keeps sending (measured: a trickling client kept it).
      if (socket.writable) socket.end(clientErrorResponse(error, ids.uuid()), () => socket.destroy());
      else socket.destroy(error);
    },
  });
}
