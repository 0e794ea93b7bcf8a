import type { Logger } from 'pino';
import { defineModule } from '../../http/module.js';
import { PACKAGE } from '../../http/package.js';
import { ErrorEnvelope } from '../../http/schemas.js';
import type { EvidenceTimestamps } from '../evidence-timestamps/index.js';
import type { KeyManagement } from '../keys/index.js';
import type { NationalRegistersStatus } from '../national/index.js';
import type { PeppolStatus } from '../peppol/index.js';
import type { RatesUpdates } from '../rates/index.js';
import type { StatusSnapshot } from '../status/index.js';
import type { RequireAdmin } from './auth.js';
import { adminConsoleRoutes } from './console-routes.js';
import { adminOpenApiRoute } from './openapi.js';
import { adminRatesRoutes } from './rates-routes.js';
import { adminRoutes } from './routes.js';
import type { AdminService } from './service.js';
import { adminStatusRoutes } from './status-routes.js';

/** What the admin API and its console need from the container. */
export interface AdminSlice {
  readonly log: Pick<Logger, 'error'>;
  readonly admin: AdminService;
  readonly manageKeys: KeyManagement;
  readonly requireAdmin: RequireAdmin;
  readonly usage: { flush(): Promise<void> };
  readonly status: { snapshot(): Promise<StatusSnapshot> };
  readonly ratesUpdates: RatesUpdates;
  readonly evidenceTimestamps: Pick<EvidenceTimestamps, 'status'>;
  readonly peppol: { status(): Promise<PeppolStatus> };
  readonly national: NationalRegistersStatus;
}

export const adminModule = defineModule({
  name: 'admin',
  surface: 'admin',
  routes: (c: AdminSlice, context) =>
    async function register(app) {
      const { requireAdmin, admin } = c;
      await app.register(
        adminRoutes({
          admin,
          manage: c.manageKeys,
          requireAdmin,
          // Written now when possible; the answer is given either way (the counts are kept for the next write).
          flushUsage: () =>
            c.usage
              .flush()
              .catch((error: unknown) => c.log.error({ err: error }, 'writing usage counts failed')),
        }),
      );
      await app.register(adminRatesRoutes({ requireAdmin, admin, rates: c.ratesUpdates }));
      await app.register(adminStatusRoutes({ requireAdmin, status: () => statusOf(c) }));
      await app.register(adminOpenApiRoute(PACKAGE.version, ErrorEnvelope));
      await app.register(adminConsoleRoutes(PACKAGE.version, { root: context.adminAlone }));
    },
});

/** `GET /admin/v1/status`: the registries' snapshot with the rates sync and the evidence timestamps. */
async function statusOf(c: AdminSlice) {
  return {
    ...(await c.status.snapshot()),
    rates: await c.ratesUpdates.status(),
    evidence_timestamps: await c.evidenceTimestamps.status(),
    peppol: await c.peppol.status(),
    national_registers: await c.national.status(),
  };
}
