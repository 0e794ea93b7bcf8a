import {
  allDigits,
  characterFailure,
  checksumFailure,
  digitAt,
  isValidDate,
  lengthFailure,
  weightedSum,
} from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

const LEGAL_1 = [1, 2, 3, 4, 5, 6, 7, 8] as const;
const LEGAL_2 = [3, 4, 5, 6, 7, 8, 9, 10] as const;
const EGN = [2, 4, 8, 5, 10, 9, 7, 3, 6] as const;
const PNF = [21, 19, 17, 13, 11, 9, 7, 3, 1] as const;
const OTHER = [4, 3, 2, 7, 6, 5, 4, 3, 2] as const;

/** 9-digit BULSTAT/UIC of legal entities: mod 11 with weights 1–8, second pass 3–10 when 10. */
export function isValidBgLegal(n: string): boolean {
  let check = weightedSum(n, LEGAL_1) % 11;
  if (check === 10) check = weightedSum(n, LEGAL_2) % 11;
  return digitAt(n, 8) === check % 10;
}

/** 10-digit EGN (personal number) with birth date (month +20 for 1800s, +40 for 2000s). */
export function isValidEgn(n: string): boolean {
  let year = 1900 + digitAt(n, 0) * 10 + digitAt(n, 1);
  let month = digitAt(n, 2) * 10 + digitAt(n, 3);
  const day = digitAt(n, 4) * 10 + digitAt(n, 5);
  if (month > 40) {
    year += 100;
    month -= 40;
  } else if (month > 20) {
    year -= 100;
    month -= 20;
  }
  if (!isValidDate(year, month, day)) return false;
  return digitAt(n, 9) === (weightedSum(n, EGN) % 11) % 10;
}

/** 10-digit PNF (personal number of a foreigner). */
export function isValidPnf(n: string): boolean {
  return digitAt(n, 9) === weightedSum(n, PNF) % 10;
}

/** 10-digit numbers of other taxpayers (weights 4,3,2,7,6,5,4,3,2; a remainder of 10 is invalid). */
export function isValidBgOther(n: string): boolean {
  const check = (11 - (weightedSum(n, OTHER) % 11)) % 11;
  return check < 10 && digitAt(n, 9) === check;
}

/**
 * Bulgaria: 9 digits (legal entities, BULSTAT/UIC) or 10 digits (EGN of individuals, PNF of
 * foreigners, other taxpayers). Algorithms: Bulgarian National Revenue Agency rules as given in
 * the European Commission's VIES check-digit specification; python-stdnum `stdnum/bg/vat.py`,
 * `stdnum/bg/egn.py`, `stdnum/bg/pnf.py`. A 10-digit number is valid when it passes any of the
 * three 10-digit checks. Because of the `mod 11 mod 10` folding and the union of three schemes,
 * not every single-digit substitution is detected.
 */
export function validateBG(national: string, prefix: VatPrefix): CheckResult {
  if (!allDigits(national)) return characterFailure(prefix, '9 or 10 digits', national);
  if (national.length === 9) return isValidBgLegal(national) ? national : checksumFailure(prefix, national);
  if (national.length === 10) {
    if (isValidEgn(national) || isValidPnf(national) || isValidBgOther(national)) return national;
    return checksumFailure(prefix, national);
  }
  return lengthFailure(prefix, '9 or 10 digits', national.length);
}
