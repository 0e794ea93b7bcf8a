import { defineModule } from '../../http/module.js';
import { dashboardRoutes } from './routes.js';

/** The key holder's dashboard page: static files, nothing from the container. */
export const dashboardModule = defineModule({
  name: 'dashboard',
  surface: 'public',
  routes: (_: unknown) => dashboardRoutes(),
});
