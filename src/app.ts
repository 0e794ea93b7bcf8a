import { isUtf8 } from 'node:buffer';
import type { Socket } from 'node:net';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifySchema,
  type onSendHookHandler,
} from 'fastify';
import type { Container } from './container.js';
import { clientAddress } from './http/client-address.js';
import { frameworkErrorHandler, registerErrorHandling } from './http/errors.js';
import { serializeRequest } from './http/log-redaction.js';
import { registerOpenApi } from './http/openapi.js';
import { PACKAGE } from './http/package.js';
import { AJV_OPTIONS, ErrorEnvelope } from './http/schemas.js';
import { serverWithFastPath } from './http/server.js';
import { clientErrorResponse, jsonErrorMessage, serverLimits } from './http/server-limits.js';
import { errors } from './lib/errors.js';
import { unstorableText } from './lib/json-text.js';
import { adminRoleOf } from './modules/admin/auth.js';
import { adminConsoleRoutes } from './modules/admin/console-routes.js';
import { adminOpenApiRoute } from './modules/admin/openapi.js';
import { adminRatesRoutes } from './modules/admin/rates-routes.js';
import { adminRoutes } from './modules/admin/routes.js';
import { adminStatusRoutes } from './modules/admin/status-routes.js';
import { auditsRoutes } from './modules/audits/routes.js';
import { batchRoutes } from './modules/batch/routes.js';
import { confirmationsRoutes } from './modules/confirmations/routes.js';
import { evidenceSummary } from './modules/confirmations/service.js';
import { dashboardRoutes } from './modules/dashboard/routes.js';
import { decideRoutes } from './modules/decide/routes.js';
import { guidesIndex, guidesRoutes, loadGuides } from './modules/guides/routes.js';
import { authenticatedOperation } from './modules/keys/auth.js';
import { createKeyLimit } from './modules/keys/key-limit.js';
import type { Operation } from './modules/keys/plans.js';
import { countsAgainstQuota } from './modules/keys/quota.js';
import { registerMetrics } from './modules/metrics/routes.js';
import { monitorsRoutes } from './modules/monitors/routes.js';
import { PLAYGROUND_KEY, playgroundIntro } from './modules/playground/playground.js';
import { proofsRoutes } from './modules/proofs/routes.js';
import { ProofSchema } from './modules/proofs/schemas.js';
import { CountryRate, ratesFastPath, ratesRoutes } from './modules/rates/routes.js';
import { statusRoutes } from './modules/status/routes.js';
import { systemRoutes } from './modules/system/routes.js';
import { usageRoutes } from './modules/usage/routes.js';
import { validationRoutes } from './modules/validation/routes.js';
import { ValidationDataSchema } from './modules/validation/schemas.js';
import { webhooksRoutes } from './modules/webhooks/routes.js';

/** A route as registered: what the authorization matrix and the fuzzing suite are generated from. */
export interface RouteEntry {
  readonly method: string;
  /** The path template, `:name` for parameters. */
  readonly url: string;
  /** The plan-gated operation of an authenticated route; `null` for a public one. */
  readonly operation: Operation | null;
  /** The role an admin route requires (`read` or `admin`); `null` for every other route. */
  readonly adminRole: 'admin' | 'read' | null;
  /** The route's TypeBox (JSON Schema) definitions: params, querystring, headers, body, response. */
  readonly schema: FastifySchema;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered on the app, in registration order. */
    routeTable: readonly RouteEntry[];
  }
}

/**
 * Builds the Fastify application from a container. Does not listen. `surface` says which routes it
 * serves: by default the public API, with the admin API and console too unless they have a listener
 * of their own (`OPENVAT_ADMIN_PORT`); `admin`: those alone, for that listener.
 */
export async function buildApp(
  container: Container,
  options: { surface?: 'default' | 'admin' } = {},
): Promise<FastifyInstance> {
  const surface = options.surface ?? 'default';
  const servesPublic = surface === 'default';
  const servesAdmin = surface === 'admin' || container.config.admin.listener === null;
  const { config, ids, log } = container;
  // Fastify's request logging (a line per request at `info`) is given the service logger only when
  // that level is on. Otherwise Fastify runs without a logger: with one, it tracks every response's
  // end with listeners, which costs cheap answers (rates, health) about a third of their throughput.
  // Errors are logged by the error handler through the service logger either way.
  const requestLogging = log.isLevelEnabled('info');
  // Today's rates of one country are answered before the framework when no request log needs
  // writing (see `ratesFastPath`); the route answers them otherwise, and every other case. Only on
  // the public API: an admin listener of its own serves no rates.
  let closing = false;
  // The client address behind trusted proxies (OPENVAT_TRUST_PROXY): per-IP limits and logs use it.
  const client = clientAddress(config.trustProxy);
  const fastPath =
    requestLogging || !servesPublic
      ? null
      : ratesFastPath({
          rates: container.rates,
          limiter: container.publicLimiter,
          ids,
          closing: () => closing,
          clientAddress: client.address,
        });
  const app = Fastify({
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
    clientErrorHandler(error, socket: Socket) {
      // Destroyed once the answer is flushed: ending only our side would leave the socket open for
      // as long as a client that never closes keeps sending (measured: a trickling client kept it).
      if (socket.writable) socket.end(clientErrorResponse(error, ids.uuid()), () => socket.destroy());
      else socket.destroy(error);
    },
  });

  // Connections beyond the cap are closed by Node as soon as they are accepted.
  if (config.connections.maxConnections > 0) app.server.maxConnections = config.connections.maxConnections;

  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.decorateRequest('principal', null);
  app.decorateRequest('startedAt', 0);
  app.decorateRequest('answeredFromCache', false);
  app.addHook('onRequest', (request, reply, done) => {
    request.startedAt = performance.now();
    // `X-Request-Id` too: the hosted API's clients read the id from it.
    reply.header('service-request-id', request.id).header('x-request-id', request.id);
    // A query's NUL could not be stored as given either (see `unstorableText` for bodies); a lone
    // surrogate cannot reach a query (percent-encoded, it is not UTF-8 and is not decoded).
    const query = request.url.indexOf('?');
    if (query !== -1 && request.url.includes('%00', query)) {
      done(errors.invalidRequest('Query parameters may not contain the NUL character (%00).'));
      return;
    }
    done();
  });
  // An answer sent before its request's body was received (a refusal at authentication, a
  // too-large Content-Length) closes the connection: otherwise Node would keep reading the rest of
  // the body for the next request, and a client trickling it would hold the socket past every
  // request timeout (that timeout ends once the response is sent).
  // (A request without a body may not be marked complete yet when a quick answer is sent: only
  // requests that announce a body are considered.)
  app.addHook('onSend', (request, reply, payload, done) => {
    const raw = request.raw;
    const announcesBody =
      (raw.headers['content-length'] ?? '0') !== '0' || raw.headers['transfer-encoding'] !== undefined;
    if (announcesBody && !raw.complete) reply.header('connection', 'close');
    done(null, payload);
  });

  // JSON bodies must be UTF-8; anything else is refused instead of being silently mangled.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  // No route takes text: a text/plain body is refused as an unsupported Content-Type, as every other
  // type is, instead of reaching a route's validation as a string.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const buffer = body as Buffer;
    const charset = /charset=([^;\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
    if (charset && charset !== 'utf-8' && charset !== 'utf8') {
      done(errors.invalidRequest(`Unsupported charset "${charset}": send JSON as UTF-8.`), undefined);
      return;
    }
    // An empty body is no body (clients that send this header on every request, a DELETE among
    // them); a route that needs a body refuses it when it validates the body.
    if (buffer.length === 0) {
      done(null, undefined);
      return;
    }
    if (
      request.headers['content-encoding'] !== undefined &&
      request.headers['content-encoding'] !== 'identity'
    ) {
      done(
        errors.invalidRequest(
          `Content-Encoding "${request.headers['content-encoding']}" is not supported: send the JSON body uncompressed.`,
        ),
        undefined,
      );
      return;
    }
    if (!isUtf8(buffer)) {
      done(errors.invalidRequest('The request body is not valid UTF-8.'), undefined);
      return;
    }
    const text = buffer.toString('utf8');
    parseJson(request, text, (error, value) => {
      if (error) {
        done(errors.invalidRequest(jsonErrorMessage(text)), undefined);
        return;
      }
      const unstorable = unstorableText(text, value);
      if (unstorable) {
        done(
          errors.invalidRequest(
            unstorable === 'nul'
              ? 'Text in the request body may not contain the NUL character (\\u0000).'
              : 'Text in the request body must be valid Unicode: it holds a lone surrogate (a \\ud800–\\udfff escape without its pair).',
          ),
          undefined,
        );
        return;
      }
      done(null, value);
    });
  });

  registerErrorHandling(app, log);
  if (config.metricsToken)
    registerMetrics(app, {
      metrics: container.metrics,
      token: config.metricsToken,
      failures: container.authFailures,
    });
  app.addSchema(ErrorEnvelope);
  app.addSchema(CountryRate);
  app.addSchema(ValidationDataSchema);
  app.addSchema(ProofSchema);
  // The pages of docs/, served under /guides/ and listed in the description `/docs` shows.
  const guides = loadGuides();
  if (servesPublic)
    await registerOpenApi(app, {
      playground: container.playground ? { key: PLAYGROUND_KEY, intro: playgroundIntro() } : null,
      description: guidesIndex(guides),
    });

  // Authenticated routes count their answers per key and operation (the usage report), and are
  // limited per API key, by plan; the limit runs after authentication.
  const { usage, monthlyQuota } = container;
  let redisWarnedAt = Number.NEGATIVE_INFINITY;
  const keyLimit = createKeyLimit({
    perMinute: config.keyRateLimitPerMinute,
    clock: container.clock,
    redis: container.redis,
    redisPrefix: config.redisPrefix,
    onError: (error) => {
      // At most once a minute: while Redis is down every keyed request would log this.
      const now = container.clock.millis();
      if (now - redisWarnedAt < 60_000) return;
      redisWarnedAt = now;
      log.warn({ err: error }, 'per-key limit: Redis unavailable, counting in this instance');
    },
  });
  const routeTable: RouteEntry[] = [];
  app.decorate('routeTable', routeTable);
  app.addHook('onRoute', (route) => {
    const operation = authenticatedOperation(route.onRequest);
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      routeTable.push({
        method,
        url: route.url,
        operation,
        adminRole: adminRoleOf(route.onRequest),
        schema: route.schema ?? {},
      });
    }
    if (operation === null) return;
    // Counted as the answer is sent (its status is final then): an `onResponse` hook would make
    // Fastify listen for the end of every response of these routes.
    const count: onSendHookHandler = (request, reply, payload, done) => {
      if (request.principal) usage.record(request.principal.id, operation, reply.statusCode);
      done(null, payload);
    };
    const limit = keyLimit(`${[route.method].flat().join(',')} ${route.url}`);
    // The monthly quota is taken after the per-minute limit (a request refused by it is not counted)
    // and given back as the answer is sent when it does not count (a stored answer, a refusal).
    const quota = [route.method].flat().some((method) => countsAgainstQuota(method, operation))
      ? { take: [monthlyQuota.take], settle: [monthlyQuota.settle] }
      : { take: [], settle: [] };
    route.onSend = [...(route.onSend ? [route.onSend].flat() : []), ...quota.settle, count];
    route.preHandler = [...(route.preHandler ? [route.preHandler].flat() : []), limit, ...quota.take];
  });

  if (servesPublic) {
    await app.register(
      systemRoutes({
        db: container.db,
        warnings: () => container.status.warnings(),
        ...(container.config.evidenceKey
          ? {
              evidence: async () => {
                const problem = await container.confirmations
                  .checkEvidence()
                  .catch(() => container.confirmations.evidenceProblem());
                return problem ? { message: evidenceSummary(problem) } : null;
              },
            }
          : {}),
      }),
    );
    await app.register(
      statusRoutes({
        status: container.status,
        ratesSync: () => container.ratesUpdates.status(),
        timestamps: () => container.evidenceTimestamps.status(),
      }),
    );
    await app.register(
      validationRoutes({
        validation: container.validation,
        requireKey: container.requireKey,
        sendRecorded: container.sendRecorded,
      }),
    );
    await app.register(
      decideRoutes({
        decide: container.decide,
        requireKey: container.requireKey,
        sendRecorded: container.sendRecorded,
      }),
    );
    await app.register(
      batchRoutes({
        batch: container.batch,
        requireKey: container.requireKey,
        sendRecorded: container.sendRecorded,
        bodyLimit: Math.max(config.bodyLimit, 4 * 1_048_576),
      }),
    );
    await app.register(auditsRoutes({ audits: container.audits, requireKey: container.requireKey }));
    await app.register(
      confirmationsRoutes({
        confirmations: container.confirmations,
        requireKey: container.requireKey,
        sendRecorded: container.sendRecorded,
      }),
    );
    await app.register(proofsRoutes({ proofs: container.proofs, requireKey: container.requireKey }));
    await app.register(
      ratesRoutes({
        rates: container.rates,
        limiter: container.publicLimiter,
        playground: container.playground,
      }),
    );
    await app.register(webhooksRoutes({ webhooks: container.webhooks, requireKey: container.requireKey }));
    await app.register(
      monitorsRoutes({
        monitors: container.monitors,
        requireKey: container.requireKey,
        bodyLimit: Math.max(config.bodyLimit, 8 * 1_048_576),
        maxPerKey: config.monitors.maxPerKey,
      }),
    );
    await app.register(usageRoutes({ usage: container.usage, requireKey: container.requireKey }));
    await app.register(dashboardRoutes());
    await app.register(guidesRoutes(guides));
  }
  if (servesAdmin) {
    await app.register(
      adminRoutes({
        admin: container.admin,
        manage: container.manageKeys,
        requireAdmin: container.requireAdmin,
        // Written now when possible; the answer is given either way (the counts are kept for the next write).
        flushUsage: () =>
          container.usage
            .flush()
            .catch((error: unknown) => log.error({ err: error }, 'writing usage counts failed')),
      }),
    );
    await app.register(
      adminRatesRoutes({
        requireAdmin: container.requireAdmin,
        admin: container.admin,
        rates: container.ratesUpdates,
      }),
    );
    await app.register(
      adminStatusRoutes({
        requireAdmin: container.requireAdmin,
        status: async () => ({
          ...(await container.status.snapshot()),
          rates: await container.ratesUpdates.status(),
          evidence_timestamps: await container.evidenceTimestamps.status(),
        }),
      }),
    );
    await app.register(adminOpenApiRoute(PACKAGE.version, ErrorEnvelope));
    await app.register(adminConsoleRoutes(PACKAGE.version, { root: !servesPublic }));
  }

  return app;
}
