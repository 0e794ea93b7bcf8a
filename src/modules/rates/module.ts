import { defineModule } from '../../http/module.js';
import type { WindowLimiter } from '../../lib/window-limiter.js';
import type { Playground } from '../keys/index.js';
import { CountryRate, ratesRoutes } from './routes.js';
import type { RatesService } from './service.js';

/** What the public rates routes need from the container. */
export interface RatesSlice {
  readonly rates: RatesService;
  readonly publicLimiter: WindowLimiter;
  readonly playground: Playground | null;
}

export const ratesModule = defineModule({
  name: 'rates',
  surface: 'public',
  schemas: [CountryRate],
  routes: (c: RatesSlice) =>
    ratesRoutes({ rates: c.rates, limiter: c.publicLimiter, playground: c.playground }),
});
