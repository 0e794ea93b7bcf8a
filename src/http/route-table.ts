import type {
  FastifyInstance,
  FastifySchema,
  onSendHookHandler,
  preHandlerHookHandler,
  RouteOptions,
} from 'fastify';

/** A route as registered: what the authorization matrix and the fuzzing suite are generated from. */
export interface RouteEntry<Operation extends string = string> {
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

/** The hooks an authenticated route gets beside its own: run before its handler, and as its answer is sent. */
export interface RouteGuards {
  readonly preHandler: readonly preHandlerHookHandler[];
  readonly onSend: readonly onSendHookHandler[];
}

/**
 * Records every route registered after this call, in registration order, and gives each
 * authenticated route (one whose `onRequest` names an operation) the guards `guard` makes for it,
 * after its own hooks. Returns the table, filled as routes are registered.
 */
export function recordRoutes<Operation extends string>(
  app: FastifyInstance,
  deps: {
    operationOf: (onRequest: unknown) => Operation | null;
    adminRoleOf: (onRequest: unknown) => 'admin' | 'read' | null;
    guard: (route: { methods: readonly string[]; url: string; operation: Operation }) => RouteGuards;
  },
): RouteEntry<Operation>[] {
  const table: RouteEntry<Operation>[] = [];
  app.addHook('onRoute', (route: RouteOptions) => {
    const operation = deps.operationOf(route.onRequest);
    const methods = [route.method].flat();
    for (const method of methods) {
      if (method === 'HEAD') continue;
      table.push({
        method,
        url: route.url,
        operation,
        adminRole: deps.adminRoleOf(route.onRequest),
        schema: route.schema ?? {},
      });
    }
    if (operation === null) return;
    const guards = deps.guard({ methods, url: route.url, operation });
    route.onSend = [...(route.onSend ? [route.onSend].flat() : []), ...guards.onSend];
    route.preHandler = [...(route.preHandler ? [route.preHandler].flat() : []), ...guards.preHandler];
  });
  return table;
}
