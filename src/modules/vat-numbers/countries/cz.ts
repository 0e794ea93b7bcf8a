import {
  allDigits,
  characterFailure,
  checksumFailure,
  digitAt,
  digitsMod,
  fail,
  isValidDate,
  lengthFailure,
  weightedSum,
} from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

const W8 = [8, 7, 6, 5, 4, 3, 2] as const;

/**
 * Czech/Slovak birth number (rodné číslo), 9 or 10 digits: YYMMDD + serial (+ check digit).
 * Month: +50 for women; from 2004 +20 (men) and +70 (women) when a day's serials run out.
 * 9-digit numbers were issued until 1953 (no check digit); 10-digit numbers from 1954: the whole
 * number is divisible by 11, except that before 1985 a remainder of 10 was written as check 0.
 * Source: Czech Act No. 133/2000 Coll. on the population register, §13; python-stdnum
 * `stdnum/cz/rc.py`.
 */
export function isValidBirthNumber(n: string): boolean {
  const len = n.length;
  if ((len !== 9 && len !== 10) || !allDigits(n)) return false;
  const yy = digitAt(n, 0) * 10 + digitAt(n, 1);
  let month = digitAt(n, 2) * 10 + digitAt(n, 3);
  const day = digitAt(n, 4) * 10 + digitAt(n, 5);
  if (month > 70) month -= 70;
  else if (month > 50) month -= 50;
  else if (month > 20) month -= 20;
  if (month < 1 || month > 12) return false;
  let year = 1900 + yy;
  if (len === 9) {
    if (year >= 1980) year -= 100;
    if (year > 1953) return false;
    return isValidDate(year, month, day);
  }
  if (year < 1954) year += 100;
  if (!isValidDate(year, month, day)) return false;
  let check = digitsMod(n, 0, 9, 11);
  if (year < 1985) check %= 10;
  return digitAt(n, 9) === check;
}

/** 8-digit IČO of legal entities: weights 8..2, check = (11 − sum mod 11) with 10→0 and 11→1. */
export function isValidCzLegal(n: string): boolean {
  const c = (11 - (weightedSum(n, W8) % 11)) % 11;
  return digitAt(n, 7) === (c === 0 ? 1 : c) % 10;
}

/** 9-digit numbers of special entities (starting with 6): weights 8..2 on digits 2–8. */
export function isValidCzSpecial(n: string): boolean {
  const c = weightedSum(n, W8, 1) % 11;
  return digitAt(n, 8) === (((8 - ((10 - c) % 11)) % 10) + 10) % 10;
}

/**
 * Czech Republic: DIČ without `CZ`. 8 digits for legal entities (IČO check digit, first digit not
 * 9), 9 digits starting with 6 for special entities, and 9- or 10-digit birth numbers for
 * individuals (`isValidBirthNumber`). Source: Czech Ministry of Finance DIČ rules as given in the
 * European Commission's VIES check-digit specification; python-stdnum `stdnum/cz/dic.py`.
 * Not every single-digit substitution is detected: the IČO check maps remainders 0 and 10 to
 * the same digit 1, the 9-digit pre-1954 birth numbers carry no check digit, and the pre-1985
 * birth numbers fold remainder 10 to 0.
 */
export function validateCZ(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '8, 9 or 10 digits', n);
  const len = n.length;
  if (len === 8) {
    if (n.charCodeAt(0) === 57)
      return fail('characters', `8-digit ${prefix} VAT numbers never start with 9; got ${n}.`);
    return isValidCzLegal(n) ? n : checksumFailure(prefix, n);
  }
  if (len === 9 && n.charCodeAt(0) === 54) return isValidCzSpecial(n) ? n : checksumFailure(prefix, n);
  if (len === 9 || len === 10) {
    if (isValidBirthNumber(n)) return n;
    return fail(
      'checksum',
      `${prefix}${n} is not a valid number: 9- and 10-digit ${prefix} numbers of individuals are birth numbers ` +
        '(a valid birth date and, for 10 digits, a check digit).',
    );
  }
  return lengthFailure(prefix, '8, 9 or 10 digits', len);
}
