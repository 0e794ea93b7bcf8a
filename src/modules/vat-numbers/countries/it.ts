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

/**
 * Italy: partita IVA, 11 digits: 7-digit company number (not all zeros), 3-digit office code
 * (001–100 provincial offices, 120, 121, 888, 999) and a Luhn check digit (Agenzia delle Entrate,
 * DPR 605/1973 art. 6 and the D.M. 23/12/1976 specification; European Commission VIES check-digit
 * specification; python-stdnum `stdnum/it/iva.py`). Luhn detects every single-digit substitution.
 */
export function validateIT(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '11 digits', n);
  if (n.length !== 11) return lengthFailure(prefix, '11 digits', n.length);
  if (digitsValue(n, 0, 7) === 0)
    return fail('characters', `${prefix} VAT numbers never start with 7 zeros; got ${n}.`);
  const office = digitsValue(n, 7, 10);
  if (
    !((office >= 1 && office <= 100) || office === 120 || office === 121 || office === 888 || office === 999)
  ) {
    return fail(
      'characters',
      `Digits 8–10 of ${prefix} VAT numbers are a tax office code (001–100, 120, 121, 888 or 999); got ${n}.`,
    );
  }
  if (luhnSum(n, 0, 11, false) !== 0) return checksumFailure(prefix, n);
  return n;
}
