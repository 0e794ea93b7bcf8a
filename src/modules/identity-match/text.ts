/**
 * Text folding for the identity match: every name, street and city is compared as lower-case ASCII
 * words, after transliteration (@sindresorhus/transliterate, with the replacements below), so
 * `Müller`, `MUELLER`, `Μύλλερ` and `Мюлер` are read the same way as far as their letters allow.
 */
import transliterate from '@sindresorhus/transliterate';

/**
 * Replacements applied before the library's own table, where its choice is not the one the
 * registries of the country use:
 * - Greek: ELOT 743 / ISO 843 (the Greek registries' romanisation) writes Χ as `ch` and Ξ as `x`
 *   (the library writes `x` and `ks`);
 * - Bulgarian: the Streamlined System of the Bulgarian Transliteration Act (2009) writes щ `sht`,
 *   ъ `a`, х `h`, ь `y` (the library follows Russian: `shch`, nothing, `kh`);
 * - Danish and Norwegian: ø `oe`, å `aa`, æ `ae` (the library writes `o`, `a`); German ä/ö/ü are
 *   already `ae`/`oe`/`ue` and ß `ss` in the library's default table.
 * The input is lower-cased first, so only lower-case letters need a replacement.
 */
const REPLACEMENTS: ReadonlyArray<[string, string]> = [
  ['χ', 'ch'],
  ['ξ', 'x'],
  ['щ', 'sht'],
  ['ъ', 'a'],
  ['х', 'h'],
  ['ь', 'y'],
  ['ø', 'oe'],
  ['å', 'aa'],
  ['æ', 'ae'],
];

/** Bulgarian: a word-final `ия` is `ia` (София → Sofia), not `iya`. */
const BULGARIAN_FINAL_IA = /ия(?!\p{L})/gu;

/**
 * Greek digraphs as ELOT 743 writes them (the library reads them letter by letter): ου `ou`;
 * αυ, ευ, ηυ `av`/`ev`/`iv`, or `af`/`ef`/`if` before a voiceless consonant or at the end of a
 * word (Ναυτιλιακή → Naftiliaki, Ευρώπη → Evropi); γγ `ng`.
 */
function greekDigraphs(lower: string): string {
  return lower
    .replace(/ο[υύ]/g, 'ou')
    .replace(
      /([αάεέηή])[υύ](?=([θκξπστφχψ]|(?!\p{L}))?)/gu,
      (_, vowel: string, voiceless: string | undefined) => {
        const base = vowel.normalize('NFD').charAt(0);
        return base + (voiceless !== undefined ? 'φ' : 'β');
      },
    )
    .replace(/γγ/g, 'ng');
}

/** Lower-case ASCII letters and digits separated by single spaces; punctuation becomes a space. */
export function fold(text: string): string {
  const lower = greekDigraphs(text.normalize('NFKC').toLowerCase().replace(BULGARIAN_FINAL_IA, 'ia'));
  return transliterate(lower, { customReplacements: REPLACEMENTS })
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/** The folded words of a text. */
export function words(text: string): string[] {
  const folded = fold(text);
  return folded === '' ? [] : folded.split(' ');
}

/**
 * Spellings that differ only by how a letter was written in ASCII: `ae`/`a` (ä, æ), `oe`/`o`
 * (ö, ø, Estonian õ/ü), `ue`/`u`, `aa`/`a` (å), `kh`/`h` (х, Χ in other systems), `ch`/`h` (Greek
 * Χ written `H`), `ph`/`f`, `y`/`i` (Greek Η/Υ, Bulgarian й). Applied to both sides of every
 * comparison, so `MULLER` (a registry that drops the umlaut) and `Müller` compare equal.
 */
export function looseKey(word: string): string {
  return word
    .replace(/ae/g, 'a')
    .replace(/oe/g, 'o')
    .replace(/ue/g, 'u')
    .replace(/aa/g, 'a')
    .replace(/kh/g, 'h')
    .replace(/ch/g, 'h')
    .replace(/ph/g, 'f')
    .replace(/y/g, 'i');
}

/** A registry's value as text to compare, or `null` when it gave none (empty, `---`, only dashes). */
export function registeredText(value: string | null | undefined): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  if (trimmed === '' || /^-+$/.test(trimmed)) return null;
  return trimmed;
}
