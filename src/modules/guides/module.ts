import { defineModule } from '../../http/module.js';
import { guidesRoutes, loadGuides } from './routes.js';

/** The pages of docs/ under /guides/: the package's own files, nothing from the container. */
export const guidesModule = defineModule({
  name: 'guides',
  surface: 'public',
  routes: (_: unknown) => guidesRoutes(loadGuides()),
});
