import { allDigits, characterFailure, checksumFailure, fail, lengthFailure, luhnSum } from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

/**
 * Sweden: momsregistreringsnummer, 12 digits = 10-digit organisation or personal number with a
 * Luhn check digit + `01` (Skatteverket; European Commission VIES check-digit specification;
 * python-stdnum `stdnum/se/vat.py`, `stdnum/se/orgnr.py`). Luhn detects every single-digit
 * substitution in the first 10 digits; any other suffix than `01` is a format error.
 */
export function validateSE(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '12 digits', n);
  if (n.length !== 12) return lengthFailure(prefix, '12 digits', n.length);
  if (n.charCodeAt(10) !== 48 || n.charCodeAt(11) !== 49) {
    return fail('characters', `${prefix} VAT numbers end in 01; got ${n}.`);
  }
  if (luhnSum(n, 0, 10, false) !== 0) return checksumFailure(prefix, n);
  return n;
}
