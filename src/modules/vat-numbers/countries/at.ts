import { allDigits, characterFailure, checksumFailure, lengthFailure, luhnSum } from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

/**
 * Austria: UID-Nummer `U` + 8 digits; the 8th digit is a check digit.
 * Algorithm: Austrian Federal Ministry of Finance UID check as listed in the European
 * Commission's VIES check-digit specification, as implemented in python-stdnum
 * `stdnum/at/uid.py`: S = Luhn sum of the 7 digits (digits 2, 4 and 6 doubled, digit sums
 * taken), check = (6 − S) mod 10.
 * Detects every single-digit substitution (Luhn). `AT12345678` (without the U) is accepted and
 * normalised to `ATU12345678`.
 */
export function validateAT(national: string, prefix: VatPrefix): CheckResult {
  let n = national;
  if (n.length > 0 && n.charCodeAt(0) !== 85 && allDigits(n)) n = 'U' + n;
  if (n.charCodeAt(0) !== 85 || !allDigits(n, 1))
    return characterFailure(prefix, 'the letter U and 8 digits', national);
  if (n.length !== 9) return lengthFailure(prefix, 'U and 8 digits', n.length - 1);
  const s = luhnSum(n, 1, 8, false);
  const check = (16 - s) % 10;
  if (n.charCodeAt(8) - 48 !== check) return checksumFailure(prefix, n);
  return n;
}
