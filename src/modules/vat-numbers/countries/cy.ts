import {
  allDigits,
  characterFailure,
  checksumFailure,
  fail,
  isLetterCode,
  lengthFailure,
} from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

// Value of a digit in an even position (1st, 3rd, 5th, 7th).
const EVEN = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21] as const;

/**
 * Cyprus: 8 digits + check letter. The first digit is 0–5 or 9 (European Commission VIES format
 * `CY[0-59]\d{7}[A-Z]`; the Commission's algorithm notes list 0, 1, 3, 4, 5, 9, and 2 is kept so
 * as not to reject a number the VIES format allows); numbers starting with `12` are not VAT
 * numbers (python-stdnum `stdnum/cy/vat.py`, VIES specification). Check letter: digits in odd positions
 * (1st, 3rd, …) are mapped 0→1, 1→0, 2→5, 3→7, 4→9, 5→13, 6→15, 7→17, 8→19, 9→21, the others
 * taken as is; the letter is A + (sum mod 26) (Cyprus Tax Department algorithm as published in
 * the VIES check-digit specification). The mapping is injective modulo 26, so every single-digit
 * substitution is detected.
 */
export function validateCY(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (n.length !== 9) {
    if (!allDigits(n, 0, n.length - 1)) return characterFailure(prefix, '8 digits and a check letter', n);
    return lengthFailure(prefix, '8 digits and a letter (9 characters)', n.length);
  }
  if (!allDigits(n, 0, 8) || !isLetterCode(n.charCodeAt(8))) {
    return characterFailure(prefix, '8 digits and a check letter', n);
  }
  const first = n.charCodeAt(0) - 48;
  if (first === 6 || first === 7 || first === 8 || (first === 1 && n.charCodeAt(1) === 50)) {
    return fail('characters', `${prefix} VAT numbers start with 0–5 or 9 (never 12); got ${n}.`);
  }
  let sum = 0;
  for (let i = 0; i < 8; i++) {
    const d = n.charCodeAt(i) - 48;
    sum += i % 2 === 0 ? (EVEN[d] ?? 0) : d;
  }
  if (n.charCodeAt(8) !== 65 + (sum % 26)) return checksumFailure(prefix, n);
  return n;
}
