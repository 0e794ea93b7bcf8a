// Small arithmetic helpers shared by the country validators. All of them work on strings of ASCII
// characters by char code and allocate nothing.
import type { CheckFailure, VatPrefix } from './types.js';

export function fail(reason: CheckFailure['reason'], message: string): CheckFailure {
  return { reason, message };
}

export function lengthFailure(prefix: VatPrefix, expected: string, got: number): CheckFailure {
  return fail('length', `${prefix} VAT numbers have ${expected} after the prefix; got ${got}.`);
}

export function characterFailure(prefix: VatPrefix, expected: string, national: string): CheckFailure {
  return fail('characters', `${prefix} VAT numbers are ${expected} after the prefix; "${national}" is not.`);
}

export function checksumFailure(prefix: VatPrefix, national: string): CheckFailure {
  return fail(
    'checksum',
    `The check digit of ${prefix}${national} is wrong; please check the number for typos.`,
  );
}

/** The digit value of the character at `i` (meaningful only when it is a digit). */
export function digitAt(s: string, i: number): number {
  return s.charCodeAt(i) - 48;
}

export function isDigitCode(c: number): boolean {
  return c >= 48 && c <= 57;
}

export function isLetterCode(c: number): boolean {
  return c >= 65 && c <= 90;
}

/** True when every character in [from, to) is an ASCII digit (an empty range is true). */
export function allDigits(s: string, from = 0, to = s.length): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** True when every character is an ASCII digit or upper-case letter. */
export function allAlphanumeric(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!(c >= 48 && c <= 57) && !(c >= 65 && c <= 90)) return false;
  }
  return true;
}

/** Σ weights[i] × digit(offset + i). */
export function weightedSum(s: string, weights: readonly number[], offset = 0): number {
  let sum = 0;
  for (let i = 0; i < weights.length; i++) sum += (weights[i] ?? 0) * (s.charCodeAt(offset + i) - 48);
  return sum;
}

/** Integer value of the digits in [from, to); callers keep ranges ≤ 15 digits. */
export function digitsValue(s: string, from: number, to: number): number {
  let v = 0;
  for (let i = from; i < to; i++) v = v * 10 + (s.charCodeAt(i) - 48);
  return v;
}

/** Remainder modulo `m` of the decimal number written by the digits in [from, to) (any length). */
export function digitsMod(s: string, from: number, to: number, m: number): number {
  let r = 0;
  for (let i = from; i < to; i++) r = (r * 10 + (s.charCodeAt(i) - 48)) % m;
  return r;
}

/**
 * Luhn sum (ISO/IEC 7812-1 annex B) of the digits in [from, to), modulo 10. With `doubleLast`
 * false the rightmost digit is not doubled (validation of a number that ends in its check digit:
 * valid when the result is 0); with `doubleLast` true the rightmost digit is doubled (computing
 * the check digit to append: it is (10 − result) mod 10).
 */
export function luhnSum(s: string, from: number, to: number, doubleLast: boolean): number {
  let sum = 0;
  let double = doubleLast;
  for (let i = to - 1; i >= from; i--) {
    let d = s.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10;
}

/**
 * ISO 7064 MOD 11,10 (hybrid system) over the digits of `s` in [from, to), the last one being
 * the check digit. Detects every single-digit substitution and every adjacent transposition.
 */
export function iso7064Mod11_10Valid(s: string, from: number, to: number): boolean {
  let p = 10;
  for (let i = from; i < to - 1; i++) {
    let t = (p + (s.charCodeAt(i) - 48)) % 10;
    if (t === 0) t = 10;
    p = (t * 2) % 11;
  }
  let check = 11 - p;
  if (check === 10) check = 0;
  return s.charCodeAt(to - 1) - 48 === check;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

/** True for a real Gregorian calendar date (month 1–12). */
export function isValidDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  if (month === 2 && day === 29) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (DAYS_IN_MONTH[month - 1] ?? 0);
}
