import { defineModule } from '../../http/module.js';
import type { RequireKey } from '../keys/index.js';
import { webhooksRoutes } from './routes.js';
import type { WebhooksService } from './service.js';

/** What the webhook routes need from the container. */
export interface WebhooksSlice {
  readonly webhooks: WebhooksService;
  readonly requireKey: RequireKey;
}

export const webhooksModule = defineModule({
  name: 'webhooks',
  surface: 'public',
  routes: (c: WebhooksSlice) => webhooksRoutes(c),
});
