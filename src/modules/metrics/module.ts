import { defineModule } from '../../http/module.js';
import type { AuthFailures } from '../keys/index.js';
import { registerMetrics } from './routes.js';
import type { Metrics } from './service.js';

/** What `GET /metrics` needs from the container; off unless `OPENVAT_METRICS_TOKEN` is set. */
export interface MetricsSlice {
  readonly metrics: Metrics;
  readonly authFailures: Pick<AuthFailures, 'fail'>;
  readonly config: { readonly metricsToken: string | null };
}

export const metricsModule = defineModule({
  name: 'metrics',
  surface: 'every',
  // Its hook counts every route's answers: it is registered before them, on the root instance.
  scope: 'root',
  routes: (c: MetricsSlice) => {
    const token = c.config.metricsToken;
    if (!token) return null;
    return async (app) => registerMetrics(app, { metrics: c.metrics, token, failures: c.authFailures });
  },
});
