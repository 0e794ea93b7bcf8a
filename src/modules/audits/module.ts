import { defineModule } from '../../http/module.js';
import type { RequireKey } from '../keys/index.js';
import { auditsRoutes } from './routes.js';
import type { AuditsService } from './service.js';

/** What the audit log routes need from the container. */
export interface AuditsSlice {
  readonly audits: AuditsService;
  readonly requireKey: RequireKey;
}

export const auditsModule = defineModule({
  name: 'audits',
  surface: 'public',
  routes: (c: AuditsSlice) => auditsRoutes(c),
});
