/** What other modules may use of `rates`; everything else in the folder is its own. */
export type { RatesService } from './service.js';
export type { DecideOutcome, RateChangeView, RatesUpdates } from './updates.js';
