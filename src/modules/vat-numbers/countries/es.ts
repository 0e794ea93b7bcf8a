import {
  allDigits,
  characterFailure,
  checksumFailure,
  digitsValue,
  fail,
  lengthFailure,
  luhnSum,
} from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';
const CIF_LETTERS = 'JABCDEFGHI';
// Organisation-type letters of the CIF (NIF of legal entities).
const CIF_TYPES = 'ABCDEFGHJNPQRSUVW';

/**
 * Spain: NIF, 9 characters. Forms (Orden EHA/451/2008 and Real Decreto 1065/2007 on the NIF;
 * python-stdnum `stdnum/es/nif.py`, `dni.py`, `nie.py`, `cif.py`):
 * - DNI (Spanish individuals): 8 digits + letter `TRWAGMYFPDXBNJZSQVHLCKE`[n mod 23];
 * - NIE (foreigners): X/Y/Z (read as 0/1/2) + 7 digits + the same letter;
 * - K/L/M (individuals without DNI): letter + 7 digits + letter of the 7 digits mod 23;
 * - CIF (entities): type letter + 7 digits + control, the Luhn check digit of the 7 digits or the
 *   letter `JABCDEFGHI`[digit]. Both control forms are accepted for every type letter, as
 *   python-stdnum does (the official rule ties some types to a letter or a digit, but numbers
 *   written either way are in circulation).
 * Mod 23 (prime) and Luhn detect every single-digit substitution.
 */
export function validateES(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  const len = n.length;
  const shape = 'a letter or digit, 7 digits and a letter or digit';
  if (len !== 9) {
    if (len > 2 && !allDigits(n, 1, len - 1)) return characterFailure(prefix, shape, n);
    return lengthFailure(prefix, '9 characters', len);
  }
  if (!allDigits(n, 1, 8)) return characterFailure(prefix, shape, n);
  const first = n.charCodeAt(0);
  const last = n.charCodeAt(8);
  if (first >= 48 && first <= 57) {
    if (last < 65 || last > 90)
      return fail('characters', `${prefix} NIF numbers of individuals end in a letter; got ${n}.`);
    return last === DNI_LETTERS.charCodeAt(digitsValue(n, 0, 8) % 23) ? n : checksumFailure(prefix, n);
  }
  if (first === 88 || first === 89 || first === 90) {
    // X, Y, Z
    if (last < 65 || last > 90) return fail('characters', `${prefix} NIE numbers end in a letter; got ${n}.`);
    const v = (first - 88) * 10_000_000 + digitsValue(n, 1, 8);
    return last === DNI_LETTERS.charCodeAt(v % 23) ? n : checksumFailure(prefix, n);
  }
  if (first === 75 || first === 76 || first === 77) {
    // K, L, M
    if (last < 65 || last > 90)
      return fail('characters', `${prefix} K/L/M numbers end in a letter; got ${n}.`);
    return last === DNI_LETTERS.charCodeAt(digitsValue(n, 1, 8) % 23) ? n : checksumFailure(prefix, n);
  }
  if (CIF_TYPES.indexOf(n[0] ?? '') < 0) {
    return fail('characters', `${prefix} VAT numbers cannot start with the letter ${n[0] ?? ''}; got ${n}.`);
  }
  const check = (10 - luhnSum(n, 1, 8, true)) % 10;
  if (last === 48 + check || last === CIF_LETTERS.charCodeAt(check)) return n;
  if ((last < 48 || last > 57) && (last < 65 || last > 90)) return characterFailure(prefix, shape, n);
  return checksumFailure(prefix, n);
}
