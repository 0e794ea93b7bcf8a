/** The national VAT registers openvat can ask when VIES cannot answer, by the name answers give as `meta.source`. */
export type NationalSource =
  | 'pl_whitelist'
  | 'cz_adis'
  | 'ro_anaf'
  | 'fi_prh'
  | 'sk_financnasprava'
  | 'si_furs'
  | 'lv_vid';

export const NATIONAL_SOURCES: readonly NationalSource[] = Object.freeze([
  'pl_whitelist',
  'cz_adis',
  'ro_anaf',
  'fi_prh',
  'sk_financnasprava',
  'si_furs',
  'lv_vid',
]);
