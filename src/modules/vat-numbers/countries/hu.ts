import { allDigits, characterFailure, checksumFailure, lengthFailure, weightedSum } from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

const W = [9, 7, 3, 1, 9, 7, 3, 1] as const;

/**
 * Hungary: ANUM, 8 digits (the first 8 digits of the adószám), Σ wᵢ·dᵢ ≡ 0 (mod 10) with weights
 * 9,7,3,1 repeated (Hungarian National Tax and Customs Administration; European Commission VIES
 * check-digit specification; python-stdnum `stdnum/hu/anum.py`). Weights are coprime to 10, so
 * every single-digit substitution is detected.
 */
export function validateHU(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '8 digits', n);
  if (n.length !== 8) return lengthFailure(prefix, '8 digits', n.length);
  if (weightedSum(n, W) % 10 !== 0) return checksumFailure(prefix, n);
  return n;
}
