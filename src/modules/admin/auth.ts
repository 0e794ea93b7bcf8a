import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { errors } from '../../http/api-error.js';
import { bearerToken } from '../../lib/bearer.js';
import { type AuthFailures, tooManyFailures } from '../keys/index.js';
import type { Actor, AdminPrincipal, AdminRole, AdminService } from './service.js';

declare module 'fastify' {
  interface FastifyRequest {
    admin: AdminPrincipal | null;
  }
}

const ADMIN_ROLE = Symbol('admin route');

/** The role a route's `onRequest` hooks require through `requireAdmin`, else `null`. */
export function adminRoleOf(onRequest: unknown): AdminRole | null {
  const hooks = Array.isArray(onRequest) ? onRequest : [onRequest];
  for (const hook of hooks) {
    const role = typeof hook === 'function' ? (hook as Record<symbol, unknown>)[ADMIN_ROLE] : undefined;
    if (role === 'admin' || role === 'read') return role;
  }
  return null;
}

/** The operator of a request that went through `requireAdmin`, with the request's facts. */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.admin) throw new Error('route is missing requireAdmin()');
  return { ...request.admin, requestId: request.id, address: request.ip };
}

/**
 * Builds the `onRequest` hook of admin routes: 401 `unauthorized` without an admin key (an API key
 * of `/v1` included), 403 `scope_not_allowed` for a `read` key on a route that writes. Failed
 * authentications count against the address as on `/v1`: beyond the limit they are answered 429,
 * and a valid admin key is still accepted from that address.
 */
export function createAdminAuth(admin: Pick<AdminService, 'authenticate'>, failures: AuthFailures | null) {
  async function fail(address: string, message: string): Promise<never> {
    const wait = (await failures?.fail(address)) ?? 0;
    if (wait !== 0) throw tooManyFailures(wait);
    throw errors.unauthorized(message);
  }

  return function requireAdmin(role: AdminRole): onRequestAsyncHookHandler {
    const hook = async function authenticateAdmin(request: FastifyRequest) {
      const header = request.headers.authorization;
      if (!header)
        throw errors.unauthorized('Missing Authorization header: send "Authorization: Bearer svc_admin_…".');
      const token = bearerToken(header);
      if (!token) throw errors.unauthorized('Malformed Authorization header: expected "Bearer svc_admin_…".');
      if (/^svc_(live|test)_/.test(token))
        return fail(
          request.ip,
          'An API key is not accepted here: /admin takes an admin key (svc_admin_…); API keys are for /v1.',
        );
      const principal = await admin.authenticate(token);
      if (principal === 'revoked') return fail(request.ip, 'This admin key has been revoked.');
      if (principal === null) return fail(request.ip, 'The admin key is not valid.');
      request.admin = principal;
      if (role === 'admin' && principal.role !== 'admin')
        throw errors.scopeNotAllowed(
          `This admin key has the read role: it may read, and this request writes (it needs the admin role).`,
        );
    };
    return Object.assign(hook, { [ADMIN_ROLE]: role });
  };
}

export type RequireAdmin = ReturnType<typeof createAdminAuth>;
