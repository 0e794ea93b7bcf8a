import {
  allDigits,
  characterFailure,
  checksumFailure,
  digitAt,
  digitsValue,
  fail,
  lengthFailure,
} from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

/** Classic 11-proof on the 9 digits: Σ (9−i)·dᵢ for i < 8 − d₈ ≡ 0 (mod 11). */
export function nlElevenProof(n: string): boolean {
  let sum = 0;
  for (let i = 0; i < 8; i++) sum += (9 - i) * digitAt(n, i);
  return (sum - digitAt(n, 8)) % 11 === 0;
}

/**
 * ISO 7064 MOD 97-10 over `NL` + the 12 characters with letters as numbers (A=10 … Z=35):
 * valid when the remainder is 1. `NL` is 2321 and `B` is 11.
 */
export function nlMod97(n: string): boolean {
  let r = 2321 % 97;
  for (let i = 0; i < 9; i++) r = (r * 10 + digitAt(n, i)) % 97;
  r = (r * 100 + 11) % 97;
  r = (r * 100 + digitsValue(n, 10, 12)) % 97;
  return r === 1;
}

/**
 * Netherlands: btw-id, 9 digits + `B` + 2 digits (not `00`). Shorter digit runs are padded with
 * leading zeros to 9 (as python-stdnum `stdnum/nl/btw.py` does). Valid when the 9 digits pass the
 * classic 11-proof (BSN/RSIN rule) or — for the btw-ids the Belastingdienst issues since
 * 1 January 2020 to sole traders — when `NL` + the whole number passes ISO 7064 MOD 97-10 with
 * letters converted to numbers (Belastingdienst, "Opbouw btw-identificatienummer", 2020;
 * python-stdnum `stdnum/nl/btw.py`). Each check alone detects every single-digit substitution,
 * but a number passing either one is valid, so a substitution can move a number from one scheme
 * to the other.
 */
export function validateNL(national: string, prefix: VatPrefix): CheckResult {
  const shape = '9 digits, the letter B and 2 digits';
  const len = national.length;
  const b = national.indexOf('B');
  if (b < 1 || b !== len - 3 || !allDigits(national, 0, b) || !allDigits(national, b + 1)) {
    if (b < 0 && len !== 12 && allDigits(national)) {
      return lengthFailure(prefix, shape + ' (12 characters)', len);
    }
    return characterFailure(prefix, shape, national);
  }
  if (b > 9) return lengthFailure(prefix, shape + ' (12 characters)', len);
  const n = b === 9 ? national : '000000000'.slice(b) + national;
  if (digitsValue(n, 0, 9) === 0)
    return fail('characters', `${prefix} VAT numbers cannot be all zeros; got ${n}.`);
  if (n.charCodeAt(10) === 48 && n.charCodeAt(11) === 48) {
    return fail('characters', `${prefix} VAT numbers end in B01 to B99, never B00; got ${n}.`);
  }
  if (!nlElevenProof(n) && !nlMod97(n)) return checksumFailure(prefix, n);
  return n;
}
