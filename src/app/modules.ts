import type { Container } from '../container.js';
import type { ModuleRegistration } from '../http/module.js';
import { adminModule } from '../modules/admin/module.js';
import { auditsModule } from '../modules/audits/module.js';
import { batchModule } from '../modules/batch/module.js';
import { confirmationsModule } from '../modules/confirmations/module.js';
import { dashboardModule } from '../modules/dashboard/module.js';
import { decideModule } from '../modules/decide/module.js';
import { guidesModule } from '../modules/guides/module.js';
import { metricsModule } from '../modules/metrics/module.js';
import { monitorsModule } from '../modules/monitors/module.js';
import { peppolModule } from '../modules/peppol/module.js';
import { proofsModule } from '../modules/proofs/module.js';
import { ratesModule } from '../modules/rates/module.js';
import { statusModule } from '../modules/status/module.js';
import { systemModule } from '../modules/system/module.js';
import { usageModule } from '../modules/usage/module.js';
import { validationModule } from '../modules/validation/module.js';
import { webhooksModule } from '../modules/webhooks/module.js';

/**
 * Every module's registration, in the order its routes are registered (the order of the OpenAPI
 * document and of the route table). Typed against the container: a module whose slice the
 * container does not hold does not compile here.
 */
export const MODULES: readonly ModuleRegistration<Container>[] = [
  metricsModule,
  systemModule,
  statusModule,
  validationModule,
  decideModule,
  peppolModule,
  batchModule,
  auditsModule,
  confirmationsModule,
  proofsModule,
  ratesModule,
  webhooksModule,
  monitorsModule,
  usageModule,
  dashboardModule,
  guidesModule,
  adminModule,
];
