import { allDigits, characterFailure, checksumFailure, digitsMod, fail, lengthFailure } from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';
import { isValidBirthNumber } from './cz.js';

/**
 * Slovakia: IČ DPH, 10 digits, first digit not 0, the whole number divisible by 11; the 3rd digit
 * is 0, 2, 3, 4, 6, 7, 8 or 9 (Slovak Financial Administration rules as given in the European
 * Commission's VIES check-digit specification; python-stdnum `stdnum/sk/dph.py`). A 10-digit birth
 * number (rodné číslo) is accepted as well, as python-stdnum does, since its 3rd digit may be 1 or 5.
 * Divisibility by 11 detects every single-digit substitution (10^k ≡ ±1 mod 11); the birth-number
 * path folds remainder 10 to 0 before 1985, so a substitution can, rarely, yield another valid
 * birth number.
 */
export function validateSK(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '10 digits', n);
  if (n.length !== 10) return lengthFailure(prefix, '10 digits', n.length);
  if (n.charCodeAt(0) === 48)
    return fail('characters', `${prefix} VAT numbers never start with 0; got ${n}.`);
  if (isValidBirthNumber(n)) return n;
  const third = n.charCodeAt(2) - 48;
  if (third === 1 || third === 5) {
    return fail(
      'characters',
      `The 3rd digit of ${prefix} VAT numbers is 0, 2, 3, 4, 6, 7, 8 or 9; got ${n}.`,
    );
  }
  if (digitsMod(n, 0, 10, 11) !== 0) return checksumFailure(prefix, n);
  return n;
}
