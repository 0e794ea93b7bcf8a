/** What other modules may use of `audits`; everything else in the folder is its own. */
export type { AuditEndpoint, AuditInput, AuditsService } from './service.js';
