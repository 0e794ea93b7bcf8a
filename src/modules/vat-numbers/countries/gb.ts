import {
  allDigits,
  characterFailure,
  checksumFailure,
  digitsValue,
  fail,
  lengthFailure,
  weightedSum,
} from '../checks.js';
import type { CheckResult, VatPrefix } from '../types.js';

const W = [8, 7, 6, 5, 4, 3, 2, 10, 1] as const;

/** Weighted sum of the first 9 digits modulo 97 (weights 8,7,6,5,4,3,2 and 10,1 for the check pair). */
export function gbChecksum(n: string): number {
  return weightedSum(n, W) % 97;
}

/**
 * United Kingdom (GB) and Northern Ireland (XI): 9 digits, or 12 digits (9 + a 3-digit branch
 * identifier, not covered by the check), or `GD` + 3 digits 000–499 (government departments) or
 * `HA` + 3 digits 500–999 (health authorities). The two check digits of the 9-digit part follow
 * HMRC's "modulus 97" scheme (weighted sum ≡ 0 mod 97) or, for numbers issued since 2010, the
 * "modulus 9755" scheme (weighted sum + 55 ≡ 0 mod 97, i.e. ≡ 42). As python-stdnum
 * `stdnum/gb/vat.py` does, numbers whose first three digits are 100 or more are also accepted with a
 * remainder of 55, and numbers below 100 0000 00 only with the modulus-97 scheme.
 * Since the schemes are combined, a single-digit substitution always changes the remainder but can
 * land on another accepted remainder, so not every substitution is detected.
 */
export function validateGB(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  const c0 = n.charCodeAt(0);
  if (c0 === 71 || c0 === 72) {
    // GD / HA
    const gd = n.startsWith('GD');
    const ha = n.startsWith('HA');
    if ((!gd && !ha) || !allDigits(n, 2)) {
      return characterFailure(prefix, '9 or 12 digits, GD and 3 digits, or HA and 3 digits', n);
    }
    if (n.length !== 5) return lengthFailure(prefix, `${gd ? 'GD' : 'HA'} and 3 digits`, n.length);
    const v = digitsValue(n, 2, 5);
    if (gd && v >= 500)
      return fail('characters', `${prefix} government department numbers are GD000 to GD499; got ${n}.`);
    if (ha && v < 500)
      return fail('characters', `${prefix} health authority numbers are HA500 to HA999; got ${n}.`);
    return n;
  }
  if (!allDigits(n))
    return characterFailure(prefix, '9 or 12 digits, GD and 3 digits, or HA and 3 digits', n);
  if (n.length !== 9 && n.length !== 12) return lengthFailure(prefix, '9 or 12 digits', n.length);
  const r = gbChecksum(n);
  const valid = r === 0 || (digitsValue(n, 0, 3) >= 100 && (r === 42 || r === 55));
  return valid ? n : checksumFailure(prefix, n);
}
