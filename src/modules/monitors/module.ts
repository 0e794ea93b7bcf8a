import { defineModule } from '../../http/module.js';
import type { RequireKey } from '../keys/index.js';
import { monitorsRoutes } from './routes.js';
import type { MonitorsService } from './service.js';

/** What the monitor routes need from the container. */
export interface MonitorsSlice {
  readonly monitors: MonitorsService;
  readonly requireKey: RequireKey;
  readonly config: {
    readonly bodyLimit: number;
    readonly monitors: { readonly maxPerKey: Readonly<Record<'pro' | 'business', number>> };
  };
}

export const monitorsModule = defineModule({
  name: 'monitors',
  surface: 'public',
  routes: (c: MonitorsSlice) =>
    monitorsRoutes({
      monitors: c.monitors,
      requireKey: c.requireKey,
      // 10,000 numbers must fit, whatever the general limit.
      bodyLimit: Math.max(c.config.bodyLimit, 8 * 1_048_576),
      maxPerKey: c.config.monitors.maxPerKey,
    }),
});
