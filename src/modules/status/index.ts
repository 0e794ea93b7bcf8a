/** What other modules may use of `status`; everything else in the folder is its own. */

export { type RatesSyncState, StatusData } from './routes.js';
export type { StatusSnapshot } from './service.js';
