import {
  allDigits,
  characterFailure,
  checksumFailure,
  digitAt,
  lengthFailure,
  weightedSum,
} from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

const W = [5, 4, 3, 2, 7, 6, 5, 4] as const;
const SUFFIXES = ['MWST', 'TVA', 'IVA', 'TPV'] as const;

/**
 * Switzerland: UID `CHE` + 9 digits, optionally followed by the VAT suffix MWST, TVA, IVA or TPV.
 * Check digit: 11 − (Σ wᵢ·dᵢ mod 11) over the first 8 digits with weights 5,4,3,2,7,6,5,4; 11 is
 * written 0 and 10 is never issued (Federal Statistical Office, UID standard eCH-0097
 * "Datenstandard Unternehmensidentifikation"; python-stdnum `stdnum/ch/uid.py`). The remainder-to-
 * check map is injective: every single-digit substitution is detected.
 * The national part handed in is what follows `CH`: `E` + 9 digits (+ suffix); `CH` + 9 digits
 * without the `E` is accepted too. The canonical national part is the 9 digits.
 */
export function validateCH(national: string, prefix: VatPrefix): CheckResult {
  let end = national.length;
  for (const suffix of SUFFIXES) {
    if (national.endsWith(suffix)) {
      end -= suffix.length;
      break;
    }
  }
  const start = national.charCodeAt(0) === 69 ? 1 : 0;
  const n = national.slice(start, end);
  if (!allDigits(n))
    return characterFailure(prefix, 'E and 9 digits, optionally followed by MWST, TVA or IVA', national);
  if (n.length !== 9) return lengthFailure(prefix, 'E and 9 digits', n.length);
  const check = (11 - (weightedSum(n, W) % 11)) % 11;
  if (check === 10 || digitAt(n, 8) !== check) return checksumFailure(prefix, 'E' + n);
  return n;
}
