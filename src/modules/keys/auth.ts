import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { bearerToken } from '../../lib/bearer.js';
import { errors, seconds } from '../../lib/errors.js';
import {
  type Playground,
  playgroundBudgetHeaders,
  playgroundExcludes,
  playgroundLimited,
} from '../playground/index.js';
import type { AuthFailures } from './auth-failures.js';
import { type Operation, operationName, planIncludes, plansFor } from './plans.js';
import type { ApiKeyPrincipal, KeysService } from './service.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: ApiKeyPrincipal | null;
  }
}

/** The authenticated key of a request that went through `requireKey`. */
export function principalOf(request: FastifyRequest): ApiKeyPrincipal {
  if (!request.principal) throw new Error('route is missing requireKey()');
  return request.principal;
}

/** The answer to an address that has used up its failed authentications. */
function tooManyFailures(retryAfterSeconds: number) {
  return errors.rateLimited(
    retryAfterSeconds,
    `Too many failed authentications from this address; retry after ${seconds(retryAfterSeconds)}.`,
  );
}

/**
 * Builds the `onRequest` hook that authenticates the bearer key and checks that the key's plan
 * includes the operation: 401 `unauthorized` for a missing, malformed, unknown or revoked key,
 * 402 `plan_required` for a plan without the operation. With `failures`, an address that presents
 * too many keys that are not valid is answered 429 `rate_limited` with `Retry-After` until its
 * minute ends; a key this instance already knows to be valid is still accepted from it.
 */
export function createAuth(
  keys: Pick<KeysService, 'authenticate' | 'known'>,
  playground: Playground | null = null,
  failures: AuthFailures | null = null,
) {
  async function principalFor(token: string, address: string): Promise<ApiKeyPrincipal> {
    const known = keys.known(token);
    if (known) return known;
    if (known === undefined) {
      const wait = failures?.blocked(address) ?? 0;
      if (wait !== 0) throw tooManyFailures(wait);
      const principal = await keys.authenticate(token);
      if (principal) return principal;
    }
    const wait = (await failures?.fail(address)) ?? 0;
    if (wait !== 0) throw tooManyFailures(wait);
    throw errors.unauthorized('The API key is not valid or has been revoked.');
  }

  return function requireKey(operation: Operation): onRequestAsyncHookHandler {
    const hook = async function authenticate(request: FastifyRequest, reply: FastifyReply) {
      const header = request.headers.authorization;
      if (!header)
        throw errors.unauthorized('Missing Authorization header: send "Authorization: Bearer <API key>".');
      const token = bearerToken(header);
      if (!token) throw errors.unauthorized('Malformed Authorization header: expected "Bearer <API key>".');
      const principal = playground?.principalFor(token) ?? (await principalFor(token, request.ip));
      request.principal = principal;
      if (principal.playground && playground) await playgroundChecks(playground, operation, request, reply);
      if (!planIncludes(principal.plan, operation))
        throw errors.planRequired(operationName(operation), plansFor(operation));
    };
    return Object.assign(hook, { [AUTHENTICATED]: operation });
  };
}

/**
 * The demo key's own rules: no webhooks, and a budget of requests per hour per IP address, which
 * its answers describe in the `x-ratelimit-*` headers (the per-key limit does not apply to it).
 */
async function playgroundChecks(
  playground: Playground,
  operation: Operation,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  if (!playground.allows(operation)) throw playgroundExcludes(operation);
  const budget = await playground.take(request.ip);
  reply.headers(playgroundBudgetHeaders(budget));
  if (budget.wait !== 0) throw playgroundLimited(budget.wait);
}

const AUTHENTICATED = Symbol('authenticated route');

/** The operation of a route whose `onRequest` hooks include `requireKey`, else `null`. */
export function authenticatedOperation(onRequest: unknown): Operation | null {
  const hooks = Array.isArray(onRequest) ? onRequest : [onRequest];
  for (const hook of hooks) {
    const operation =
      typeof hook === 'function' ? (hook as Record<symbol, unknown>)[AUTHENTICATED] : undefined;
    if (typeof operation === 'string') return operation as Operation;
  }
  return null;
}

export type RequireKey = ReturnType<typeof createAuth>;
