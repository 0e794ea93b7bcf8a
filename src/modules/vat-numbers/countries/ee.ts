import { allDigits, characterFailure, checksumFailure, lengthFailure, weightedSum } from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

const W = [3, 7, 1, 3, 7, 1, 3, 7, 1] as const;

/**
 * Estonia: KMKR number, 9 digits, Σ wᵢ·dᵢ ≡ 0 (mod 10) with weights 3,7,1 repeated (Estonian Tax
 * and Customs Board; European Commission VIES check-digit specification; python-stdnum
 * `stdnum/ee/kmkr.py`). Weights are coprime to 10, so every single-digit substitution is detected.
 */
export function validateEE(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '9 digits', n);
  if (n.length !== 9) return lengthFailure(prefix, '9 digits', n.length);
  if (weightedSum(n, W) % 10 !== 0) return checksumFailure(prefix, n);
  return n;
}
