import type { FastifyRequest, onSendHookHandler, preHandlerHookHandler } from 'fastify';
import { errors } from '../../http/api-error.js';
import type { Clock } from '../../lib/clock.js';
import type { Operation, Plan } from './plans.js';
import type { QuotaRepository } from './quota-repository.js';
import type { ApiKeyPrincipal } from './service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the answer sent was a stored one (`meta.cached`): it does not count against a quota. */
    answeredFromCache: boolean;
  }
}

const QUOTA_OPERATIONS: ReadonlySet<Operation> = new Set<Operation>([
  'validate',
  'decide',
  'batch',
  'confirm',
]);

/**
 * Whether requests of a route count against a key's monthly quota: those that ask a registry or the
 * authority (or, for a test key, its fixed table): `GET /v1/validate`, `GET /v1/peppol/{identifier}`
 * and the `POST`s of decide,
 * batch and confirm (a batch request counts as one call). Reading a job or a confirmation does not.
 */
export function countsAgainstQuota(method: string, operation: Operation): boolean {
  return (
    operation === 'validate' ||
    operation === 'peppol' ||
    (method === 'POST' && QUOTA_OPERATIONS.has(operation))
  );
}

/** The first instant of the UTC month after `at`. */
export function nextMonthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

/** The key whose monthly count a key's calls go to: its own, or its roll chain's first key's. */
export function quotaCountOf(principal: ApiKeyPrincipal): string {
  return principal.policy?.quotaKeyId ?? principal.id;
}

/** A key's monthly quota: its own, else its plan's default; null = unlimited. */
export function quotaOf(principal: ApiKeyPrincipal, planDefaults: Readonly<Record<Plan, number | null>>) {
  return principal.policy?.monthlyQuota ?? planDefaults[principal.plan] ?? null;
}

/**
 * Monthly quotas (calls per calendar month, UTC) of `/v1`, as two route hooks. Before the handler,
 * a call is counted in the database with a conditional increment (`key_month_calls`), so every
 * instance sharing the database together accepts at most the quota; beyond it the answer is 429
 * `rate_limited` with `Retry-After` until the next month starts. As the answer is sent, the call is
 * given back when it does not count: an answer served from the cache, or a refusal (status 400 or
 * more). Beyond the quota, a request that the cache will answer (`answeredFromCache`) is still served.
 * Keys without a quota (nor a plan default) and the playground's demo key are not counted. A key
 * made by rolling another counts on the count of the key it replaces (`quotaKeyId`), so a roll
 * does not start the month again: the old key during its overlap and the new one share one count.
 */
export function createMonthlyQuota(deps: {
  repository: QuotaRepository;
  clock: Clock;
  /** Default quota by plan (`OPENVAT_MONTHLY_QUOTA_*`); null = unlimited. */
  planDefaults: Readonly<Record<Plan, number | null>>;
  /**
   * Whether a request beyond the quota will be answered from the cache: it is then served (and not
   * counted) instead of refused.
   */
  answeredFromCache?: (request: FastifyRequest) => Promise<boolean>;
}) {
  const { repository, clock, planDefaults } = deps;
  const counted = new WeakMap<FastifyRequest, { keyId: string; month: string }>();

  // Callback hooks, not async ones: a key without a quota passes without a promise.
  const take: preHandlerHookHandler = function monthlyQuota(request, _reply, done) {
    const principal = request.principal;
    if (!principal || principal.playground) return done();
    const quota = quotaOf(principal, planDefaults);
    if (quota === null) return done();
    const now = clock.now();
    const month = now.toISOString().slice(0, 7);
    const refuseUnlessCached = async () => {
      if (await deps.answeredFromCache?.(request)) return done();
      const next = nextMonthStart(now);
      const wait = Math.max(1, Math.ceil((next.getTime() - now.getTime()) / 1000));
      done(
        errors.rateLimited(
          wait,
          `This API key's monthly quota of ${quota} calls is used up for ${month}; it starts again at ${next.toISOString()} (retry after ${wait} s).`,
        ),
      );
    };
    const countId = quotaCountOf(principal);
    repository
      .take(countId, month, quota)
      .then((count) => {
        if (count === null) return refuseUnlessCached();
        counted.set(request, { keyId: countId, month });
        done();
      })
      .catch(done);
  };

  const settle: onSendHookHandler = function monthlyQuotaSettle(request, reply, payload, done) {
    const call = counted.get(request);
    if (!call) return done(null, payload);
    counted.delete(request);
    if (reply.statusCode < 400 && !request.answeredFromCache) return done(null, payload);
    // The answer is sent either way: a call the database could not give back stays counted.
    const send = () => done(null, payload);
    repository.giveBack(call.keyId, call.month).then(send, send);
  };

  return { take, settle };
}

export type MonthlyQuota = ReturnType<typeof createMonthlyQuota>;
