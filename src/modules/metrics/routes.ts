import type { FastifyInstance } from 'fastify';
import { errors } from '../../http/api-error.js';
import { bearerToken } from '../../lib/bearer.js';
import { safeEqual } from '../../lib/crypto.js';
import { type AuthFailures, tooManyFailures } from '../keys/index.js';
import type { Metrics } from './service.js';

/**
 * `GET /metrics` (Prometheus text format) for `Authorization: Bearer <OPENVAT_METRICS_TOKEN>`, and
 * the count and duration of every answered request by route template. Registered on the root
 * instance (not as an encapsulated plugin) so the hook sees every route. Off unless a token is set.
 * A wrong token is a failed authentication of the client address, limited as on `/v1`; the right
 * one is served from any address.
 */
export function registerMetrics(
  app: FastifyInstance,
  deps: { metrics: Metrics; token: string; failures?: Pick<AuthFailures, 'fail'> | null },
) {
  const { metrics, token } = deps;
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    if (route !== '/metrics') {
      metrics.request(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    }
    done();
  });
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    const given = bearerToken(request.headers.authorization) ?? '';
    if (!safeEqual(given, token)) {
      // As on /v1, a request without a credential is not a failed authentication.
      const wait = given === '' ? 0 : ((await deps.failures?.fail(request.ip)) ?? 0);
      if (wait !== 0) throw tooManyFailures(wait);
      throw errors.unauthorized('GET /metrics needs "Authorization: Bearer <OPENVAT_METRICS_TOKEN>".');
    }
    const body = await metrics.scrape();
    return reply.header('cache-control', 'no-store').type(metrics.registry.contentType).send(body);
  });
}
