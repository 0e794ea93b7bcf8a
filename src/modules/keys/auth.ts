import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { type ApiError, errors } from '../../http/api-error.js';
import { refusalError } from '../../http/refusals.js';
import { bearerToken } from '../../lib/bearer.js';
import { planList, seconds } from '../../lib/errors.js';
import { addressAllowed } from './allowlist.js';
import { type AuthFailures, tooManyFailures } from './auth-failures.js';
import { type Playground, type PlaygroundBudget, playgroundBudgetHeaders } from './demo-key.js';
import { type Operation, operationName, PLANS, planIncludes, plansFor } from './plans.js';
import { type KeyPolicy, scopeOf } from './policy.js';
import { type ApiKeyPrincipal, type KeysService, unexpired } from './service.js';

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
 * The refusal of a key used from an address outside its allowlist. Stored entries that admit no
 * address (written before entries had to be addresses as written) are named in it and logged.
 */
function notAllowedFrom(
  request: FastifyRequest,
  keyId: string,
  allowlist: NonNullable<KeyPolicy['allowlist']>,
) {
  const unusable = allowlist.unusable;
  if (unusable.length > 0)
    request.log.warn(
      { key_id: keyId, entries: unusable },
      'API key allowlist entries that are not addresses as written admit no address',
    );
  const note =
    unusable.length === 0
      ? ''
      : ` (${unusable.map((e) => `"${e}"`).join(', ')} ${unusable.length === 1 ? 'is' : 'are'} not an address as written and admit${unusable.length === 1 ? 's' : ''} no address: replace ${unusable.length === 1 ? 'it' : 'them'} through the admin API)`;
  return errors.ipNotAllowed(
    `This API key may not be used from ${request.ip}: its allowlist is ${allowlist.text.join(', ') || 'empty'}${note}.`,
  );
}

/**
 * Builds the `onRequest` hook that authenticates the bearer key and checks that the key's plan
 * includes the operation: 401 `unauthorized` for a missing, malformed, unknown or revoked key,
 * 402 `plan_required` for a plan without the operation, 403 `ip_not_allowed` or `scope_not_allowed`
 * for a key used outside its allowlist or scopes. With `failures`, an address that presents
 * too many keys that are not valid is answered 429 `rate_limited` with `Retry-After` for them until
 * its minute ends; a valid key is still checked and accepted from it (it may be another client's
 * behind the same proxy).
 */
export function createAuth(
  keys: Pick<KeysService, 'verdict' | 'known' | 'now'>,
  playground: Playground | null = null,
  failures: AuthFailures | null = null,
) {
  async function principalFor(token: string, address: string): Promise<ApiKeyPrincipal> {
    const verdict = unexpired(keys.known(token) ?? (await keys.verdict(token)), keys.now());
    if (verdict.kind === 'ok') return verdict.principal;
    const wait = (await failures?.fail(address)) ?? 0;
    if (wait !== 0) throw tooManyFailures(wait);
    throw refusalError(verdict);
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
      const policy = principal.policy;
      if (policy?.allowlist && !addressAllowed(request.ip, policy.allowlist.cidrs))
        throw notAllowedFrom(request, principal.id, policy.allowlist);
      if (policy?.scopes && !policy.scopes.includes(scopeOf(operation))) {
        throw errors.scopeNotAllowed(
          `${operationName(operation)} needs the scope "${scopeOf(operation)}", which this API key does not have (its scopes: ${policy.scopes.join(', ') || 'none'}).`,
        );
      }
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
  if (budget.wait !== 0) throw playgroundLimited(budget);
}

/** 429 for a demo-key request over its hourly budget. */
export function playgroundLimited(budget: PlaygroundBudget): ApiError {
  return errors.rateLimited(
    budget.wait,
    `The playground's demo key allows ${budget.limit} requests per hour from one address; retry after ${seconds(budget.wait)}, or use a key of your own.`,
  );
}

/** 402 for an operation the demo key may not use. */
function playgroundExcludes(operation: Operation): ApiError {
  const plans = plansFor(operation);
  const name = operationName(operation);
  const which = plans.length === PLANS.length ? '' : ` on the ${planList(plans)} plan`;
  return errors.planRequired(
    name,
    plans,
    `${name} is not available to the playground's demo key; use a key of your own${which}.`,
  );
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
