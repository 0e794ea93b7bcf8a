import {
  allDigits,
  characterFailure,
  checksumFailure,
  digitAt,
  fail,
  isLetterCode,
  lengthFailure,
} from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

// Check letters: remainder 0 is W, 1–22 are A–V.
const ALPHABET = 'WABCDEFGHIJKLMNOPQRSTUV';

/**
 * Ireland (Irish Revenue; European Commission VIES check-digit specification; python-stdnum
 * `stdnum/ie/vat.py`):
 * - new format: 7 digits + check letter, optionally a second letter (`W`, or `A`–`I` for numbers
 *   issued since 2013); sum = Σ (8−i)·dᵢ over the 7 digits + 9 × value of the second letter
 *   (W=0, A=1 … I=9); check letter = `WABCDEFGHIJKLMNOPQRSTUV`[sum mod 23];
 * - old format: digit, letter or `+` or `*`, 5 digits, check letter; the check is computed on
 *   `0` + the 5 digits + the first digit with the same weights.
 * Weights 2–8 are non-zero mod 23 (prime): every single-digit substitution is detected.
 */
export function validateIE(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  const len = n.length;
  const shape = '7 digits and 1 or 2 letters, or the old form digit, letter, 5 digits, letter';
  if (len !== 8 && len !== 9) {
    for (let i = 0; i < len; i++) {
      const c = n.charCodeAt(i);
      if (!(c >= 48 && c <= 57) && !isLetterCode(c) && c !== 43 && c !== 42)
        return characterFailure(prefix, shape, n);
    }
    return lengthFailure(prefix, '8 or 9 characters', len);
  }
  const c1 = n.charCodeAt(1);
  const oldForm = len === 8 && (isLetterCode(c1) || c1 === 43 || c1 === 42);
  if (!allDigits(n, 0, 1) || !allDigits(n, 2, 7) || (!oldForm && !allDigits(n, 1, 2))) {
    return characterFailure(prefix, shape, n);
  }
  const check = ALPHABET.indexOf(n[7] ?? '');
  if (check < 0) return characterFailure(prefix, shape, n);
  let sum: number;
  if (oldForm) {
    sum = 7 * digitAt(n, 2) + 6 * digitAt(n, 3) + 5 * digitAt(n, 4) + 4 * digitAt(n, 5) + 3 * digitAt(n, 6);
    sum += 2 * digitAt(n, 0);
  } else {
    sum = 0;
    for (let i = 0; i < 7; i++) sum += (8 - i) * digitAt(n, i);
    if (len === 9) {
      const c8 = n.charCodeAt(8);
      if (c8 === 87) {
        // W counts as 0
      } else if (c8 >= 65 && c8 <= 73) {
        sum += 9 * (c8 - 64);
      } else {
        return fail(
          'characters',
          `The second letter of 9-character ${prefix} VAT numbers is W or A to I; got ${n}.`,
        );
      }
    }
  }
  if (sum % 23 !== check) return checksumFailure(prefix, n);
  return n;
}
