import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';

/** Where a module's routes are served: the public API, the admin API, or both listeners. */
export type Surface = 'public' | 'admin' | 'every';

/** What a module's routes may know of the app they are registered on. */
export interface RouteContext {
  /** This app serves the admin API alone (its own listener, `OPENVAT_ADMIN_PORT`): its console answers at `/`. */
  readonly adminAlone: boolean;
}

/** A module's routes, registered as a plugin. */
export type ModuleRoutes = (app: FastifyInstance) => Promise<void>;

/**
 * A feature module's one registration: its routes, the shared schemas they reference by `$id`,
 * and (as the type of `routes`' first parameter) the slice of the container it needs. `buildApp`
 * walks the list in `src/app/modules.ts`; nothing else wires a route.
 */
export interface ModuleRegistration<Slice> {
  readonly name: string;
  readonly surface: Surface;
  /** Schemas added to the app before any route (the OpenAPI components other routes `$ref`). */
  readonly schemas?: readonly TSchema[];
  /**
   * `root`: the routes are registered on the root instance, before the route hooks, so that their
   * own hooks see every route (metrics). Otherwise they are an encapsulated plugin, in list order.
   */
  readonly scope?: 'root';
  /** The module's routes, given its slice of the container; `null` when the configuration turns them off. */
  readonly routes: (slice: Slice, context: RouteContext) => ModuleRoutes | null;
}

/** Declares a module's registration; the slice type is read from `routes`' first parameter. */
export function defineModule<Slice>(registration: ModuleRegistration<Slice>): ModuleRegistration<Slice> {
  return registration;
}
