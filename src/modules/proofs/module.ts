import { defineModule } from '../../http/module.js';
import type { RequireKey } from '../keys/index.js';
import { proofsRoutes } from './routes.js';
import { ProofSchema } from './schemas.js';
import type { ProofsService } from './service.js';

/** What the proof routes need from the container. */
export interface ProofsSlice {
  readonly proofs: ProofsService;
  readonly requireKey: RequireKey;
}

export const proofsModule = defineModule({
  name: 'proofs',
  surface: 'public',
  schemas: [ProofSchema],
  routes: (c: ProofsSlice) => proofsRoutes(c),
});
