import {
  allDigits,
  characterFailure,
  checksumFailure,
  fail,
  iso7064Mod11_10Valid,
  lengthFailure,
} from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

/**
 * German USt-IdNr check on the 9 digits after `DE`: first digit 1–9, last digit an ISO 7064
 * MOD 11,10 check digit (Bundeszentralamt für Steuern; European Commission VIES check-digit
 * specification; python-stdnum `stdnum/de/vat.py`).
 */
export function isValidGermanVatDigits(national: string): boolean {
  return (
    national.length === 9 &&
    allDigits(national) &&
    national.charCodeAt(0) !== 48 &&
    iso7064Mod11_10Valid(national, 0, 9)
  );
}

/**
 * Germany: 9 digits, ISO 7064 MOD 11,10 (see `isValidGermanVatDigits`). Detects every
 * single-digit substitution.
 */
export function validateDE(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  if (!allDigits(n)) return characterFailure(prefix, '9 digits', n);
  if (n.length !== 9) return lengthFailure(prefix, '9 digits', n.length);
  if (n.charCodeAt(0) === 48)
    return fail('characters', `${prefix} VAT numbers never start with 0; got ${n}.`);
  if (!iso7064Mod11_10Valid(n, 0, 9)) return checksumFailure(prefix, n);
  return n;
}
