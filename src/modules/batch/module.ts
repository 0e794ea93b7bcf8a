import { defineModule } from '../../http/module.js';
import type { RequireKey } from '../keys/index.js';
import type { SendRecorded } from '../outbox/index.js';
import { batchRoutes } from './routes.js';
import type { BatchService } from './service.js';

/** What the batch routes need from the container. */
export interface BatchSlice {
  readonly batch: BatchService;
  readonly requireKey: RequireKey;
  readonly sendRecorded: SendRecorded;
  readonly config: { readonly bodyLimit: number };
}

export const batchModule = defineModule({
  name: 'batch',
  surface: 'public',
  routes: (c: BatchSlice) =>
    batchRoutes({
      batch: c.batch,
      requireKey: c.requireKey,
      sendRecorded: c.sendRecorded,
      // 10,000 numbers must fit, whatever the general limit.
      bodyLimit: Math.max(c.config.bodyLimit, 4 * 1_048_576),
    }),
});
