import {
  allDigits,
  characterFailure,
  checksumFailure,
  iso7064Mod11_10Valid,
  lengthFailure,
} from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

/**
 * Croatia: OIB, 11 digits, last digit an ISO 7064 MOD 11,10 check digit (Croatian Tax
 * Administration OIB rules, Zakon o osobnom identifikacijskom broju; European Commission VIES
 * check-digit specification; python-stdnum `stdnum/hr/oib.py`). Detects every single-digit
 * substitution.
 */
export function validateHR(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '11 digits', n);
  if (n.length !== 11) return lengthFailure(prefix, '11 digits', n.length);
  if (!iso7064Mod11_10Valid(n, 0, 11)) return checksumFailure(prefix, n);
  return n;
}
