import { defineModule } from '../../http/module.js';
import type { RequireKey } from '../keys/index.js';
import type { SendRecorded } from '../outbox/index.js';
import { confirmationsRoutes } from './routes.js';
import type { ConfirmationsService } from './service.js';

/** What the qualified confirmation routes need from the container. */
export interface ConfirmationsSlice {
  readonly confirmations: ConfirmationsService;
  readonly requireKey: RequireKey;
  readonly sendRecorded: SendRecorded;
}

export const confirmationsModule = defineModule({
  name: 'confirmations',
  surface: 'public',
  routes: (c: ConfirmationsSlice) => confirmationsRoutes(c),
});
