import { defineModule } from '../../http/module.js';
import type { RequireKey } from '../keys/index.js';
import type { SendRecorded } from '../outbox/index.js';
import { peppolRoutes } from './routes.js';
import { PeppolDataSchema, PeppolPartSchema } from './schemas.js';
import type { PeppolPort } from './types.js';

/** What `GET /v1/peppol/{identifier}` needs from the container. */
export interface PeppolSlice {
  readonly peppol: PeppolPort;
  readonly requireKey: RequireKey;
  readonly sendRecorded: SendRecorded;
}

export const peppolModule = defineModule({
  name: 'peppol',
  surface: 'public',
  schemas: [PeppolDataSchema, PeppolPartSchema],
  routes: (c: PeppolSlice) => peppolRoutes(c),
});
