import { defineModule } from '../../http/module.js';
import type { RequireKey } from '../keys/index.js';
import type { SendRecorded } from '../outbox/index.js';
import { decideRoutes } from './routes.js';
import type { DecideService } from './service.js';

/** What `POST /v1/decide` needs from the container. */
export interface DecideSlice {
  readonly decide: DecideService;
  readonly requireKey: RequireKey;
  readonly sendRecorded: SendRecorded;
}

export const decideModule = defineModule({
  name: 'decide',
  surface: 'public',
  routes: (c: DecideSlice) => decideRoutes(c),
});
