// Input clean-up before the prefix is read: drops separators and spaces (ASCII and Unicode),
// upper-cases letters and folds full-width digits and letters to ASCII, with one pass over the
// input and no regular expressions. Characters it does not know are kept, so that the country
// validator reports them as `characters`.

/** Longest input, after trimming separators at both ends, that is parsed at all. */
export const MAX_INPUT_LENGTH = 64;

const SKIP = 0;
const KEEP = 1;
const LOWER = 2;
const OTHER = 3;

/**
 * Class of each ASCII code. Dropped anywhere: whitespace and control characters, `. - / , _ : ;`,
 * brackets `( ) [ ] { }` and quotes `" ' \``. Kept: digits, upper-case letters, `+` and `*` (old
 * Irish numbers). Lower-case letters are upper-cased. Every other character is kept as is.
 */
const ASCII_CLASS: readonly number[] = Object.freeze(
  Array.from({ length: 128 }, (_, c) => {
    if (c <= 32 || c === 127) return SKIP;
    if ((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || c === 43 || c === 42) return KEEP;
    if (c >= 97 && c <= 122) return LOWER;
    if ('.-/,_:;()[]{}"\'`'.includes(String.fromCharCode(c))) return SKIP;
    return OTHER;
  }),
);

/**
 * Maps a non-ASCII code: −1 to drop it (Unicode spaces, zero-width characters, dashes, dots,
 * full-width punctuation), an ASCII code for full-width digits and letters, else the code itself.
 */
function mapNonAscii(c: number): number {
  if (c >= 0xff10 && c <= 0xff19) return c - 0xff10 + 48;
  if (c >= 0xff21 && c <= 0xff3a) return c - 0xff21 + 65;
  if (c >= 0xff41 && c <= 0xff5a) return c - 0xff41 + 65;
  if (c >= 0x2000 && c <= 0x2015) return -1; // spaces, zero-width characters, hyphens and dashes
  switch (c) {
    case 0x85:
    case 0xa0:
    case 0xad:
    case 0xb7:
    case 0x1680:
    case 0x180e:
    case 0x2024:
    case 0x2027:
    case 0x2028:
    case 0x2029:
    case 0x202f:
    case 0x205f:
    case 0x2060:
    case 0x2212:
    case 0x3000:
    case 0xfe58:
    case 0xfe63:
    case 0xfeff:
    case 0xff08:
    case 0xff09:
    case 0xff0c:
    case 0xff0d:
    case 0xff0e:
    case 0xff0f:
    case 0xff1a:
      return -1;
    default:
      return c;
  }
}

function isSkipped(c: number): boolean {
  return c < 128 ? ASCII_CLASS[c] === SKIP : mapNonAscii(c) < 0;
}

/**
 * The input without separators, upper case; `null` when, after trimming separators at both
 * ends, it is longer than `MAX_INPUT_LENGTH` (checked before any other work).
 */
export function compactInput(input: string): string | null {
  let start = 0;
  let end = input.length;
  if (end > MAX_INPUT_LENGTH) {
    while (start < end && isSkipped(input.charCodeAt(start))) start++;
    while (end > start && isSkipped(input.charCodeAt(end - 1))) end--;
    if (end - start > MAX_INPUT_LENGTH) return null;
  }
  // Fast path: nothing to change.
  let i = start;
  for (; i < end; i++) {
    const c = input.charCodeAt(i);
    if (c >= 128 || ASCII_CLASS[c] !== KEEP) break;
  }
  if (i === end) return start === 0 && end === input.length ? input : input.slice(start, end);
  let out = input.slice(start, i);
  let run = -1; // start of a run of characters copied unchanged
  for (; i < end; i++) {
    const c = input.charCodeAt(i);
    let mapped: number;
    if (c < 128) {
      const cls = ASCII_CLASS[c];
      if (cls === KEEP || cls === OTHER) {
        if (run < 0) run = i;
        continue;
      }
      mapped = cls === LOWER ? c - 32 : -1;
    } else {
      mapped = mapNonAscii(c);
      if (mapped === c) {
        if (run < 0) run = i;
        continue;
      }
    }
    if (run >= 0) {
      out += input.slice(run, i);
      run = -1;
    }
    if (mapped >= 0) out += String.fromCharCode(mapped);
  }
  if (run >= 0) out += input.slice(run, end);
  return out;
}
