/** What other modules may use of `evidence-timestamps`; everything else in the folder is its own. */
export type { CoveringToken, EvidenceTimestampsRepository } from './repository.js';
export type { EvidenceTimestamps, TimestampStatus } from './service.js';
