import { allDigits, characterFailure, checksumFailure, digitAt, fail, lengthFailure } from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

/**
 * Slovenia: davčna številka, 8 digits, first not 0; check digit = 11 − (Σ (8−i)·dᵢ mod 11) over the
 * first 7 digits, 10 written as 0 and 11 never issued (Financial Administration of Slovenia;
 * European Commission VIES check-digit specification; python-stdnum `stdnum/si/ddv.py`). The map
 * from remainder to check digit is injective, so every single-digit substitution is detected.
 */
export function validateSI(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '8 digits', n);
  if (n.length !== 8) return lengthFailure(prefix, '8 digits', n.length);
  if (n.charCodeAt(0) === 48)
    return fail('characters', `${prefix} VAT numbers never start with 0; got ${n}.`);
  let sum = 0;
  for (let i = 0; i < 7; i++) sum += (8 - i) * digitAt(n, i);
  const check = 11 - (sum % 11);
  if (check === 11 || digitAt(n, 7) !== check % 10) return checksumFailure(prefix, n);
  return n;
}
