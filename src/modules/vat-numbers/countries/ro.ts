import {
  allDigits,
  characterFailure,
  checksumFailure,
  digitAt,
  fail,
  isValidDate,
  lengthFailure,
  weightedSum,
} from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

const CUI = [7, 5, 3, 2, 1, 7, 5, 3, 2] as const;
const CNP = [2, 7, 9, 1, 4, 6, 3, 5, 8, 2, 7, 9] as const;

/** CUI/CIF check: the digits before the check, right-aligned under weights 7,5,3,2,1,7,5,3,2. */
export function roCuiValid(n: string): boolean {
  const len = n.length;
  let sum = 0;
  const offset = 9 - (len - 1);
  for (let i = 0; i < len - 1; i++) sum += (CUI[offset + i] ?? 0) * digitAt(n, i);
  return digitAt(n, len - 1) === ((sum * 10) % 11) % 10;
}

/** CNP birth date: sex/century digit (1–2: 1900s, 3–4: 1800s, 5–6: 2000s, 7–9: residents), YYMMDD. */
function cnpDateValid(n: string): boolean {
  const s = digitAt(n, 0);
  const century = s === 3 || s === 4 ? 1800 : s === 5 || s === 6 ? 2000 : 1900;
  const year = century + digitAt(n, 1) * 10 + digitAt(n, 2);
  return isValidDate(year, digitAt(n, 3) * 10 + digitAt(n, 4), digitAt(n, 5) * 10 + digitAt(n, 6));
}

/**
 * Romania: CUI/CIF, 2 to 10 digits without leading zero; check digit = (10 × Σ wᵢ·dᵢ) mod 11 mod 10
 * with weights 7,5,3,2,1,7,5,3,2 aligned to the right (ANAF; European Commission VIES check-digit
 * specification; python-stdnum `stdnum/ro/cui.py`). A 13-digit CNP (personal numeric code,
 * weights 2,7,9,1,4,6,3,5,8,2,7,9, remainder 10 written as 1; python-stdnum `stdnum/ro/cnp.py`)
 * is accepted too, as python-stdnum `stdnum/ro/cf.py` does. The `mod 10` folding means not every
 * single-digit substitution is detected.
 */
export function validateRO(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '2 to 10 digits', n);
  const len = n.length;
  if (len === 13) {
    if (n.charCodeAt(0) === 48)
      return fail('characters', `13-digit ${prefix} numbers never start with 0; got ${n}.`);
    if (!cnpDateValid(n))
      return fail('checksum', `${prefix}${n} is not a valid personal numeric code (birth date).`);
    const r = weightedSum(n, CNP) % 11;
    return digitAt(n, 12) === (r === 10 ? 1 : r) ? n : checksumFailure(prefix, n);
  }
  if (len < 2 || len > 10) return lengthFailure(prefix, '2 to 10 digits', len);
  if (n.charCodeAt(0) === 48)
    return fail('characters', `${prefix} VAT numbers never start with 0; got ${n}.`);
  if (!roCuiValid(n)) return checksumFailure(prefix, n);
  return n;
}
