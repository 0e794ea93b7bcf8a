import { allDigits, characterFailure, checksumFailure, lengthFailure, weightedSum } from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

const W = [7, 9, 10, 5, 8, 4, 2, 1] as const;

/**
 * Finland: ALV number = Y-tunnus (business ID) without the dash, 8 digits,
 * Σ wᵢ·dᵢ ≡ 0 (mod 11) with weights 7,9,10,5,8,4,2,1 (Finnish Tax Administration business ID
 * check; European Commission VIES check-digit specification; python-stdnum `stdnum/fi/alv.py`).
 * Every weight is non-zero mod 11: every single-digit substitution is detected.
 */
export function validateFI(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '8 digits', n);
  if (n.length !== 8) return lengthFailure(prefix, '8 digits', n.length);
  if (weightedSum(n, W) % 11 !== 0) return checksumFailure(prefix, n);
  return n;
}
