import { allDigits, characterFailure, checksumFailure, digitsValue, fail, lengthFailure } from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

/**
 * Belgium: enterprise number, 10 digits starting with 0 or 1 (numbers starting with 1 are issued
 * since 2023); the old 9-digit form gets a leading 0. The last two digits are
 * 97 − (first 8 digits mod 97) (Crossroads Bank for Enterprises numbering rules, as in the
 * European Commission's VIES check-digit specification and python-stdnum `stdnum/be/vat.py`).
 * Detects every single-digit substitution (97 is prime and larger than any single-digit change
 * of the two-digit check).
 */
export function validateBE(national: string, prefix: VatPrefix): CheckResult {
  if (!allDigits(national)) return characterFailure(prefix, '10 digits', national);
  const n = national.length === 9 ? '0' + national : national;
  if (n.length !== 10) return lengthFailure(prefix, '10 digits (or 9 in the old form)', national.length);
  const first = n.charCodeAt(0);
  if (first !== 48 && first !== 49)
    return fail('characters', `${prefix} VAT numbers start with 0 or 1; got ${n}.`);
  const check = 97 - (digitsValue(n, 0, 8) % 97);
  if (digitsValue(n, 8, 10) !== check) return checksumFailure(prefix, n);
  return n;
}
