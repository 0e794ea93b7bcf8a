// The member states' own VAT registers, asked when VIES cannot answer: the fallback service, its
// quotas and their status.
export type { NationalFallbacks, ViesFailure } from './fallbacks.js';
export type { NationalRegisterStatus, NationalRegistersStatus } from './status.js';
