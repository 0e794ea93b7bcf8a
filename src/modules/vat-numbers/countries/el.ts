import { allDigits, characterFailure, checksumFailure, digitAt, lengthFailure } from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

/**
 * Greece (prefix EL): AFM, 9 digits; the old 8-digit form gets a leading 0. Check digit:
 * (Σ dᵢ·2^(9−i) for the first 8 digits) mod 11 mod 10 (Greek General Secretariat for Information
 * Systems; European Commission VIES check-digit specification; python-stdnum `stdnum/gr/vat.py`).
 * The final `mod 10` maps remainders 0 and 10 to the same digit, so not every single-digit
 * substitution is detected.
 */
export function validateEL(national: string, prefix: VatPrefix): CheckResult {
  if (!allDigits(national)) return characterFailure(prefix, '9 digits', national);
  const n = national.length === 8 ? '0' + national : national;
  if (n.length !== 9) return lengthFailure(prefix, '9 digits', national.length);
  let sum = 0;
  for (let i = 0; i < 8; i++) sum = sum * 2 + digitAt(n, i);
  if (digitAt(n, 8) !== ((sum * 2) % 11) % 10) return checksumFailure(prefix, n);
  return n;
}
