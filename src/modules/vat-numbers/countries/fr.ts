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

// Characters allowed in the two-character key: digits and letters without I and O.
const KEY_ALPHABET = '0123456789ABCDEFGHJKLMNPQRSTUVWXYZ';

/**
 * France: 2-character key + 9-digit SIREN. The SIREN passes the Luhn check (INSEE), except for
 * Monaco numbers whose SIREN part starts with `000`. Numeric key (Direction générale des Finances
 * publiques, Bulletin officiel des impôts 3 CA-94; European Commission VIES check-digit
 * specification): key = (12 + 3 × (SIREN mod 97)) mod 97, i.e. (SIREN·100 + 12) mod 97.
 * Alphanumeric "new style" key (same VIES specification; python-stdnum `stdnum/fr/tva.py`): with
 * i₁, i₂ the positions of the key characters in `0123456789ABCDEFGHJKLMNPQRSTUVWXYZ`,
 * S = 24·i₁ + i₂ − 10 when the first is a digit, else 34·i₁ + i₂ − 100; valid when
 * (SIREN + 1 + ⌊S / 11⌋) mod 11 = S mod 11.
 * Numeric keys: every single-digit substitution is detected (Luhn on the SIREN; mod 97 on the key;
 * mod 97 alone for Monaco). Alphanumeric keys: substitutions in the SIREN are detected by Luhn, but
 * the mod-11 key check cannot catch every change of a digit inside the key.
 */
export function validateFR(national: string, prefix: VatPrefix): CheckResult {
  const n = national;
  const shape = 'a 2-character key (digits or letters other than I and O) and a 9-digit SIREN';
  const k1 = KEY_ALPHABET.indexOf(n[0] ?? '');
  const k2 = KEY_ALPHABET.indexOf(n[1] ?? '');
  if ((n.length >= 1 && k1 < 0) || (n.length >= 2 && k2 < 0) || !allDigits(n, 2)) {
    return characterFailure(prefix, shape, n);
  }
  if (n.length !== 11)
    return lengthFailure(prefix, '11 characters (2-character key + 9-digit SIREN)', n.length);
  const monaco = n.charCodeAt(2) === 48 && n.charCodeAt(3) === 48 && n.charCodeAt(4) === 48;
  if (!monaco && luhnSum(n, 2, 11, false) !== 0) {
    return fail(
      'checksum',
      `The SIREN part of ${prefix}${n} fails its Luhn check; please check the number for typos.`,
    );
  }
  const siren = digitsValue(n, 2, 11);
  if (k1 < 10 && k2 < 10) {
    if (k1 * 10 + k2 !== (siren * 100 + 12) % 97) return checksumFailure(prefix, n);
    return n;
  }
  const s = k1 < 10 ? k1 * 24 + k2 - 10 : k1 * 34 + k2 - 100;
  if ((siren + 1 + Math.floor(s / 11)) % 11 !== s % 11) return checksumFailure(prefix, n);
  return n;
}
