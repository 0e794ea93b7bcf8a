import { allDigits, characterFailure, checksumFailure, digitsValue, lengthFailure } from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

/**
 * Luxembourg: 8 digits; the last two are the first six modulo 89 (Administration de
 * l'enregistrement, des domaines et de la TVA; European Commission VIES check-digit specification;
 * python-stdnum `stdnum/lu/tva.py`). 89 is prime and exceeds every single-digit change of the
 * check pair: every single-digit substitution is detected.
 */
export function validateLU(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '8 digits', n);
  if (n.length !== 8) return lengthFailure(prefix, '8 digits', n.length);
  if (digitsValue(n, 0, 6) % 89 !== digitsValue(n, 6, 8)) return checksumFailure(prefix, n);
  return n;
}
