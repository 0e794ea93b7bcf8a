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

const LEGAL = [9, 1, 4, 8, 3, 10, 2, 5, 7, 6, 1] as const;
const PERSON = [10, 5, 8, 4, 2, 1, 6, 3, 7, 9] as const;

/**
 * Latvia: PVN number, 11 digits (State Revenue Service; European Commission VIES check-digit
 * specification; python-stdnum `stdnum/lv/pvn.py`):
 * - legal entities (first digit 4–9): Σ wᵢ·dᵢ ≡ 3 (mod 11), weights 9,1,4,8,3,10,2,5,7,6,1 —
 *   every weight non-zero mod 11, so every single-digit substitution is detected;
 * - natural persons (first digit 0–3): personal code DDMMYY + century digit (0 = 1800s,
 *   1 = 1900s, 2 = 2000s) + 3 digits + check digit (1 + Σ wᵢ·dᵢ) mod 11 mod 10 with weights
 *   10,5,8,4,2,1,6,3,7,9 — the `mod 10` folding leaves some substitutions undetected;
 * - personal codes issued since July 2017 start with 32 and carry no birth date; they are accepted
 *   with 11 digits and no further check, as no check-digit rule for them has been published.
 */
export function validateLV(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '11 digits', n);
  if (n.length !== 11) return lengthFailure(prefix, '11 digits', n.length);
  const first = digitAt(n, 0);
  if (first > 3) return weightedSum(n, LEGAL) % 11 === 3 ? n : checksumFailure(prefix, n);
  if (first === 3 && digitAt(n, 1) === 2) return n;
  const day = first * 10 + digitAt(n, 1);
  const month = digitAt(n, 2) * 10 + digitAt(n, 3);
  const year = 1800 + digitAt(n, 6) * 100 + digitAt(n, 4) * 10 + digitAt(n, 5);
  if (!isValidDate(year, month, day)) {
    return fail(
      'checksum',
      `${prefix}${n} is not a valid personal code: ${prefix} numbers starting with 0–3 begin with a birth date.`,
    );
  }
  if (digitAt(n, 10) !== ((1 + weightedSum(n, PERSON)) % 11) % 10) return checksumFailure(prefix, n);
  return n;
}
