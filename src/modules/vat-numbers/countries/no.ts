import { allDigits, characterFailure, checksumFailure, lengthFailure, weightedSum } from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

const W = [3, 2, 7, 6, 5, 4, 3, 2, 1] as const;

/**
 * Norway: organisasjonsnummer, 9 digits, optionally followed by `MVA` in the VAT form. Check
 * digit: 11 − (Σ wᵢ·dᵢ mod 11) over the first 8 digits with weights 3,2,7,6,5,4,3,2; 11 is written
 * 0 and 10 is never issued — equivalently Σ with weight 1 for the check digit ≡ 0 (mod 11)
 * (Brønnøysund Register Centre, "Organisasjonsnummeret"; python-stdnum `stdnum/no/orgnr.py`,
 * `stdnum/no/mva.py`). Every weight is non-zero mod 11: every single-digit substitution is
 * detected. The canonical national part is the 9 digits without `MVA`.
 */
export function validateNO(national: string, prefix: VatPrefix): CheckResult {
  const n = national.endsWith('MVA') ? national.slice(0, -3) : national;
  if (!allDigits(n)) return characterFailure(prefix, '9 digits, optionally followed by MVA', national);
  if (n.length !== 9) return lengthFailure(prefix, '9 digits', n.length);
  if (weightedSum(n, W) % 11 !== 0) return checksumFailure(prefix, n);
  return n;
}
