// The member states' own VAT registers, asked when VIES cannot answer: the fallback service, its
// quotas and their status.
export type { NationalFallbacks, ViesFailure } from './fallbacks.js';
export {
  type FileSource,
  fileCopyView,
  type NationalFileCopyStatus,
  type NationalFilesView,
  type NationalRegisterStatus,
  type NationalRegistersStatus,
} from './status.js';
