/** What other modules may use of `metrics`; everything else in the folder is its own. */
export type { MetricsObserver } from './service.js';
