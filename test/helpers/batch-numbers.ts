import { parseVatNumber } from '../../src/modules/vat-numbers/index.js';

/** The 27 EU member states as VIES prefixes. */
export const EU_PREFIXES = (
  'AT BE BG CY CZ DE DK EE EL ES FI FR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK'.split(' ') as Array<
    keyof typeof TEMPLATES
  >
).slice();

/** One real, well-formed number per prefix; the generator varies its digits. */
const TEMPLATES = {
  AT: 'ATU14243102',
  BE: 'BE0468561072',
  BG: 'BG103873594',
  CY: 'CY10246672X',
  CZ: 'CZ25123891',
  DE: 'DE113866163',
  DK: 'DK10503280',
  EE: 'EE100931558',
  EL: 'EL039868210',
  ES: 'ESQ0818001J',
  FI: 'FI02459042',
  FR: 'FR04409414364',
  HR: 'HR02574432339',
  HU: 'HU12509403',
  IE: 'IE0005306C',
  IT: 'IT01404480202',
  LT: 'LT100001354118',
  LU: 'LU10059929',
  LV: 'LV40003521600',
  MT: 'MT10396417',
  NL: 'NL001241643B01',
  PL: 'PL5211355116',
  PT: 'PT500019720',
  RO: 'RO11358544',
  SE: 'SE202100500001',
  SI: 'SI26808498',
  SK: 'SK1078449064',
} as const;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Repairs a candidate's check characters: tries every character at one position, then two. */
function repair(prefix: string, national: string): string | null {
  const ok = (n: string) => {
    const parsed = parseVatNumber(`${prefix}${n}`);
    return parsed.ok ? parsed.normalised : null;
  };
  const direct = ok(national);
  if (direct) return direct;
  for (let p = national.length - 1; p >= 0; p--) {
    for (const c of ALPHABET) {
      const found = ok(national.slice(0, p) + c + national.slice(p + 1));
      if (found) return found;
    }
  }
  for (let a = 0; a < 10; a++) {
    for (let b = 0; b < 10; b++) {
      const found = ok(`${a}${b}${national.slice(2)}`);
      if (found) return found;
    }
  }
  return null;
}

/**
 * `count` distinct well-formed numbers (valid check digits) of one prefix, deterministic for a given
 * `offset`: the template's middle digits are replaced by a counter and the check characters repaired.
 */
export function wellFormedNumbers(prefix: keyof typeof TEMPLATES, count: number, offset = 0): string[] {
  const template = TEMPLATES[prefix].slice(prefix.length);
  const digitPositions = [...template]
    .map((c, i) => (/\d/.test(c) && i >= 1 && i < template.length - 3 ? i : -1))
    .filter((i) => i >= 0);
  const out = new Set<string>();
  for (let seed = offset; out.size < count && seed < offset + count * 50; seed++) {
    const digits = String(seed).padStart(digitPositions.length, '0').slice(-digitPositions.length);
    const chars = [...template];
    digitPositions.forEach((p, i) => {
      chars[p] = digits[i] as string;
    });
    const found = repair(prefix, chars.join(''));
    if (found) out.add(found);
  }
  if (out.size < count) throw new Error(`could only make ${out.size} ${prefix} numbers`);
  return [...out];
}

/** `perCountry` numbers of each of the 27 member states, interleaved or grouped by country. */
export function euNumbers(
  perCountry: number,
  options: { offset?: number; grouped?: boolean } = {},
): string[] {
  const lists = EU_PREFIXES.map((p) => wellFormedNumbers(p, perCountry, options.offset ?? 0));
  if (options.grouped) return lists.flat();
  const out: string[] = [];
  for (let i = 0; i < perCountry; i++) for (const list of lists) out.push(list[i] as string);
  return out;
}
