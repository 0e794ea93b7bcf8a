import { defineModule } from '../../http/module.js';
import type { RequireKey } from '../keys/index.js';
import type { SendRecorded } from '../outbox/index.js';
import type { PeppolPort } from '../peppol/index.js';
import { validationRoutes } from './routes.js';
import { IdentityMatchSchema, ValidationDataSchema } from './schemas.js';
import type { ValidationPort } from './types.js';

/** What `GET /v1/validate` needs from the container. */
export interface ValidationSlice {
  readonly validation: ValidationPort;
  /** The Peppol look-up, for `include=peppol`. */
  readonly peppol: PeppolPort;
  readonly requireKey: RequireKey;
  readonly sendRecorded: SendRecorded;
}

export const validationModule = defineModule({
  name: 'validation',
  surface: 'public',
  schemas: [IdentityMatchSchema, ValidationDataSchema],
  routes: (c: ValidationSlice) => validationRoutes(c),
});
