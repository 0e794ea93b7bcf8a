import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { bearerToken } from '../../lib/bearer.js';
import { errors } from '../../lib/errors.js';
import {
  type Playground,
  playgroundBudgetHeaders,
  playgroundExcludes,
  playgroundLimited,
} from '../playground/index.js';
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

/**
 * Builds the `onRequest` hook that authenticates the bearer key and checks that the key's plan
 * includes the operation: 401 `unauthorized` for a missing, malformed, unknown or revoked key,
 * 402 `plan_required` for a plan without the operation.
 */
export function createAuth(keys: Pick<KeysService, 'authenticate'>, playground: Playground | null = null) {
  return function requireKey(operation: Operation): onRequestAsyncHookHandler {
    const hook = async function authenticate(request: FastifyRequest, reply: FastifyReply) {
      const header = request.headers.authorization;
      if (!header)
        throw errors.unauthorized('Missing Authorization header: send "Authorization: Bearer <API key>".');
      const token = bearerToken(header);
      if (!token) throw errors.unauthorized('Malformed Authorization header: expected "Bearer <API key>".');
      const principal = playground?.principalFor(token) ?? (await keys.authenticate(token));
      if (!principal) throw errors.unauthorized('The API key is not valid or has been revoked.');
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
