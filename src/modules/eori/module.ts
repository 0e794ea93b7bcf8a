import { defineModule } from '../../http/module.js';
import type { RequireKey } from '../keys/index.js';
import type { SendRecorded } from '../outbox/index.js';
import type { EoriAnswersRepository } from './repository.js';
import { eoriRoutes } from './routes.js';
import { EoriDataSchema } from './schemas.js';
import type { EoriCheckService } from './service.js';

/** What the EORI routes need from the container. */
export interface EoriSlice {
  readonly eori: EoriCheckService;
  readonly eoriAnswers: Pick<EoriAnswersRepository, 'upsertMany'>;
  readonly requireKey: RequireKey;
  readonly sendRecorded: SendRecorded;
}

export const eoriModule = defineModule({
  name: 'eori',
  surface: 'public',
  schemas: [EoriDataSchema],
  routes: (c: EoriSlice) => eoriRoutes(c),
});
