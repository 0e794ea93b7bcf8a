import { allDigits, characterFailure, checksumFailure, lengthFailure, weightedSum } from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

const W = [6, 5, 7, 2, 3, 4, 5, 6, 7, -1] as const;

/**
 * Poland: NIP, 10 digits; Σ wᵢ·dᵢ over the first 9 digits (weights 6,5,7,2,3,4,5,6,7) mod 11
 * equals the last digit, a remainder of 10 is never issued (Rozporządzenie Ministra Finansów on
 * NIP; European Commission VIES check-digit specification; python-stdnum `stdnum/pl/nip.py`).
 * Every weight is non-zero mod 11: every single-digit substitution is detected.
 */
export function validatePL(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '10 digits', n);
  if (n.length !== 10) return lengthFailure(prefix, '10 digits', n.length);
  if (weightedSum(n, W) % 11 !== 0) return checksumFailure(prefix, n);
  return n;
}
