import { allDigits, characterFailure, checksumFailure, fail, lengthFailure, weightedSum } from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

const W = [3, 4, 6, 7, 8, 9, 10, 1] as const;

/**
 * Malta: 8 digits, first not 0; the last two digits make Σ wᵢ·dᵢ ≡ 0 (mod 37) with weights
 * 3,4,6,7,8,9 and 10,1 for the check pair (Commissioner for Revenue; European Commission VIES
 * check-digit specification; python-stdnum `stdnum/mt/vat.py`). 37 is prime and larger than any
 * single-digit change: every single-digit substitution is detected.
 */
export function validateMT(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '8 digits', n);
  if (n.length !== 8) return lengthFailure(prefix, '8 digits', n.length);
  if (n.charCodeAt(0) === 48)
    return fail('characters', `${prefix} VAT numbers never start with 0; got ${n}.`);
  if (weightedSum(n, W) % 37 !== 0) return checksumFailure(prefix, n);
  return n;
}
