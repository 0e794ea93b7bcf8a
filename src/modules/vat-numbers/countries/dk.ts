import { allDigits, characterFailure, checksumFailure, fail, lengthFailure, weightedSum } from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

const W = [2, 7, 6, 5, 4, 3, 2, 1] as const;

/**
 * Denmark: CVR number, 8 digits, first digit not 0, Σ wᵢ·dᵢ ≡ 0 (mod 11) with weights
 * 2,7,6,5,4,3,2,1 (Danish Business Authority CVR rules; European Commission VIES check-digit
 * specification; python-stdnum `stdnum/dk/cvr.py`). Every weight is non-zero mod 11, so every
 * single-digit substitution is detected.
 */
export function validateDK(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '8 digits', n);
  if (n.length !== 8) return lengthFailure(prefix, '8 digits', n.length);
  if (n.charCodeAt(0) === 48)
    return fail('characters', `${prefix} VAT numbers never start with 0; got ${n}.`);
  if (weightedSum(n, W) % 11 !== 0) return checksumFailure(prefix, n);
  return n;
}
