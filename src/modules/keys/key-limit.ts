import type { FastifyReply, HookHandlerDoneFunction, preHandlerHookHandler } from 'fastify';
import { errors } from '../../http/api-error.js';
import type { Clock } from '../../lib/clock.js';
import {
  createRedisWindowLimiter,
  createWindowLimiter,
  type RedisCounter,
  rateLimitHeaders,
  type SharedWindowLimiter,
  type WindowHit,
  type WindowLimiter,
} from '../../lib/window-limiter.js';
import { PLANS, type Plan } from './plans.js';

const MINUTE_MS = 60_000;

/**
 * The per-key limit of authenticated routes (`OPENVAT_RATE_LIMIT_*`, requests per minute by plan, or
 * the key's own `rate_limit_per_minute`),
 * as a `preHandler` hook per route that runs after authentication. Each route counts a key's requests
 * on its own (as `@fastify/rate-limit`'s per-route stores did before): fixed windows aligned to the minute,
 * counted in this process, or in Redis when one is configured (one budget per key across instances;
 * while Redis fails, each instance counts for itself). Every answer carries `x-ratelimit-limit`,
 * `-remaining` and `-reset`; past the limit the answer is 429 `rate_limited` with `Retry-After`. The
 * playground's demo key has a budget of its own (see requireKey, which sends these headers for it) and
 * is not counted here.
 *
 * This replaced `@fastify/rate-limit`, whose asynchronous hook and store took about a third of the
 * CPU time of a test-key `GET /v1/validate` (169 against 129 µs per request without any limit,
 * medians of 4 × 15,000 requests at 50 connections, 2026-11-23); the in-process counter is a
 * synchronous map update.
 */
export function createKeyLimit(options: {
  perMinute: Readonly<Record<Plan, number>>;
  clock: Clock;
  redis?: RedisCounter | null;
  /** Prefix of the Redis keys (`OPENVAT_REDIS_PREFIX`). */
  redisPrefix?: string;
  onError?: (error: unknown) => void;
}): (route: string) => preHandlerHookHandler {
  const { perMinute, clock } = options;

  function answer(reply: FastifyReply, max: number, hit: WindowHit, done: HookHandlerDoneFunction) {
    reply.headers(rateLimitHeaders(max, Math.max(0, max - hit.count), hit.resetSeconds));
    if (hit.count > max) done(errors.rateLimited(hit.resetSeconds));
    else done();
  }

  const redis = options.redis;
  if (redis) {
    const shared = Object.fromEntries(
      PLANS.map((plan) => [
        plan,
        createRedisWindowLimiter({
          redis,
          prefix: `${options.redisPrefix ?? 'openvat:'}key-limit:${plan}:`,
          max: perMinute[plan],
          windowMs: MINUTE_MS,
          clock,
          ...(options.onError ? { onError: options.onError } : {}),
        }),
      ]),
    ) as Record<Plan, SharedWindowLimiter>;
    return (route) =>
      function keyLimit(request, reply, done) {
        const principal = request.principal;
        if (!principal || principal.playground) return done();
        const limiter = shared[principal.plan];
        limiter.hit(`${principal.id}:${route}`).then(
          (hit) => answer(reply, principal.policy?.rateLimitPerMinute ?? limiter.max, hit, done),
          () => done(),
        );
      };
  }
  const local = Object.fromEntries(
    PLANS.map((plan) => [plan, createWindowLimiter({ max: perMinute[plan], windowMs: MINUTE_MS, clock })]),
  ) as Record<Plan, WindowLimiter>;
  return (route) =>
    function keyLimit(request, reply, done) {
      const principal = request.principal;
      if (!principal || principal.playground) return done();
      const limiter = local[principal.plan];
      answer(
        reply,
        principal.policy?.rateLimitPerMinute ?? limiter.max,
        limiter.hit(`${principal.id}:${route}`),
        done,
      );
    };
}
