import { defineModule } from '../../http/module.js';
import type { EvidenceTimestamps } from '../evidence-timestamps/index.js';
import type { NationalRegistersStatus } from '../national/index.js';
import type { PeppolService } from '../peppol/index.js';
import type { RatesUpdates } from '../rates/index.js';
import { statusRoutes } from './routes.js';
import type { StatusService } from './service.js';

/** What `GET /v1/status` needs from the container. */
export interface StatusSlice {
  readonly status: StatusService;
  readonly ratesUpdates: Pick<RatesUpdates, 'status'>;
  readonly evidenceTimestamps: Pick<EvidenceTimestamps, 'status'>;
  readonly peppol: Pick<PeppolService, 'status'>;
  readonly national: NationalRegistersStatus;
}

export const statusModule = defineModule({
  name: 'status',
  surface: 'public',
  routes: (c: StatusSlice) =>
    statusRoutes({
      status: c.status,
      ratesSync: () => c.ratesUpdates.status(),
      timestamps: () => c.evidenceTimestamps.status(),
      peppol: () => c.peppol.status(),
      nationalRegisters: () => c.national.status(),
    }),
});
