import { allDigits, characterFailure, checksumFailure, digitAt, fail, lengthFailure } from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

/**
 * Portugal: NIF/NIPC, 9 digits, first not 0; check digit = 11 − (Σ (9−i)·dᵢ mod 11) over the
 * first 8 digits, with 10 and 11 written as 0 (Autoridade Tributária e Aduaneira; European
 * Commission VIES check-digit specification; python-stdnum `stdnum/pt/nif.py`). Remainders 0 and 1
 * both give check digit 0, so not every single-digit substitution is detected.
 */
export function validatePT(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '9 digits', n);
  if (n.length !== 9) return lengthFailure(prefix, '9 digits', n.length);
  if (n.charCodeAt(0) === 48)
    return fail('characters', `${prefix} VAT numbers never start with 0; got ${n}.`);
  let sum = 0;
  for (let i = 0; i < 8; i++) sum += (9 - i) * digitAt(n, i);
  if (digitAt(n, 8) !== ((11 - (sum % 11)) % 11) % 10) return checksumFailure(prefix, n);
  return n;
}
