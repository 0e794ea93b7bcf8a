import type { onSendHookHandler } from 'fastify';
import type { Clock } from '../../lib/clock.js';
import type { RedisCounter } from '../../lib/window-limiter.js';
import { createKeyLimit } from './key-limit.js';
import type { Operation, Plan } from './plans.js';
import { countsAgainstQuota, type MonthlyQuota } from './quota.js';

/**
 * The guards of an authenticated route, after its own hooks: the per-key limit by plan, then the
 * monthly quota (a request refused by the limit is not counted; the quota is given back as the
 * answer is sent when it does not count: a stored answer, a refusal), and the count of its answers
 * per key and operation (the usage report).
 */
export function createRouteGuards(deps: {
  perMinute: Readonly<Record<Plan, number>>;
  clock: Clock;
  redis: RedisCounter | null;
  redisPrefix: string;
  monthlyQuota: Pick<MonthlyQuota, 'take' | 'settle'>;
  usage: { record(keyId: string, operation: Operation, status: number): void };
  log: { warn(object: object, message: string): void };
}) {
  const { monthlyQuota, usage, clock, log } = deps;
  let redisWarnedAt = Number.NEGATIVE_INFINITY;
  const keyLimit = createKeyLimit({
    perMinute: deps.perMinute,
    clock,
    redis: deps.redis,
    redisPrefix: deps.redisPrefix,
    onError: warnRedisDown,
  });

  /** At most once a minute: while Redis is down every keyed request would log this. */
  function warnRedisDown(error: unknown) {
    const now = clock.millis();
    if (now - redisWarnedAt < 60_000) return;
    redisWarnedAt = now;
    log.warn({ err: error }, 'per-key limit: Redis unavailable, counting in this instance');
  }

  function guard(route: { methods: readonly string[]; url: string; operation: Operation }) {
    const { methods, operation } = route;
    // Counted as the answer is sent (its status is final then): an `onResponse` hook would make
    // Fastify listen for the end of every response of these routes.
    const count: onSendHookHandler = (request, reply, payload, done) => {
      if (request.principal) usage.record(request.principal.id, operation, reply.statusCode);
      done(null, payload);
    };
    const limit = keyLimit(`${methods.join(',')} ${route.url}`);
    const quota = methods.some((method) => countsAgainstQuota(method, operation));
    return {
      preHandler: quota ? [limit, monthlyQuota.take] : [limit],
      onSend: quota ? [monthlyQuota.settle, count] : [count],
    };
  }

  return { guard };
}
