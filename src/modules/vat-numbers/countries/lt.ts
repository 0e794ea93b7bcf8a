import { allDigits, characterFailure, checksumFailure, digitAt, fail, lengthFailure } from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

/** LT check digit over digits [0, len−1): weights 1..9,1.. then, if 10, 3..9,1,2..; mod 11 mod 10. */
export function ltCheckDigit(n: string, len: number): number {
  let sum = 0;
  for (let i = 0; i < len; i++) sum += (1 + (i % 9)) * digitAt(n, i);
  let check = sum % 11;
  if (check === 10) {
    sum = 0;
    for (let i = 0; i < len; i++) sum += (1 + ((i + 2) % 9)) * digitAt(n, i);
    check = sum % 11;
  }
  return check % 10;
}

/**
 * Lithuania: PVM code, 9 digits (legal entities; 8th digit 1) or 12 digits (temporarily
 * registered taxpayers and individuals; 11th digit 1). Check digit: Σ wᵢ·dᵢ mod 11 with weights
 * 1,2,…,9,1,2 and, when the remainder is 10, a second pass with weights 3,4,…,9,1,2,3,4; a final
 * remainder of 10 gives 0 (State Tax Inspectorate of Lithuania; European Commission VIES
 * check-digit specification; python-stdnum `stdnum/lt/pvm.py`). The two-pass scheme and the
 * folding of 10 to 0 mean not every single-digit substitution is detected.
 */
export function validateLT(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '9 or 12 digits', n);
  const len = n.length;
  if (len !== 9 && len !== 12) return lengthFailure(prefix, '9 or 12 digits', len);
  if (n.charCodeAt(len - 2) !== 49) {
    return fail('characters', `The second-to-last digit of ${prefix} VAT numbers is always 1; got ${n}.`);
  }
  if (digitAt(n, len - 1) !== ltCheckDigit(n, len - 1)) return checksumFailure(prefix, n);
  return n;
}
