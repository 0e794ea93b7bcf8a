import { defineModule } from '../../http/module.js';
import type { RequireKey } from '../keys/index.js';
import { usageRoutes } from './routes.js';
import type { UsageService } from './service.js';

/** What `GET /v1/usage` needs from the container. */
export interface UsageSlice {
  readonly usage: UsageService;
  readonly requireKey: RequireKey;
}

export const usageModule = defineModule({
  name: 'usage',
  surface: 'public',
  routes: (c: UsageSlice) => usageRoutes(c),
});
