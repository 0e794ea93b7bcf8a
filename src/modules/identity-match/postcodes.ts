/**
 * Postcodes: their formats per country (to find one in a registry's free-text address) and their
 * comparison (exact, once spaces, dashes, case and a country prefix such as `L-`, `LV-` or `D-` are
 * removed: `1062 HG` = `1062hg`, `00-001` = `00001`, `L-2449` = `2449`).
 *
 * Formats: the Universal Postal Union's "Postal addressing systems" per member country (POST*CODE),
 * as written in the member states' own addresses; the optional country prefix is how VIES prints
 * some of them (`L-2449  LUXEMBOURG`, yolk/valvat spec/valvat/lookup_spec.rb).
 */

/** Key: the VAT prefix (Greece `EL`, Northern Ireland `XI`). */
export const POSTCODE_FORMATS: Readonly<Record<string, string>> = {
  AT: '(?:AT?-)?\\d{4}',
  BE: '(?:B-)?\\d{4}',
  BG: '\\d{4}',
  CY: '(?:CY-)?\\d{4}',
  CZ: '(?:CZ-)?\\d{3} ?\\d{2}',
  DE: '(?:D-)?\\d{5}',
  DK: '(?:DK-)?\\d{4}',
  EE: '\\d{5}',
  EL: '(?:GR-)?\\d{3} ?\\d{2}',
  ES: '\\d{5}',
  FI: '(?:FI-)?\\d{5}',
  FR: '(?:F-)?\\d{5}',
  HR: '(?:HR-)?\\d{5}',
  HU: '(?:H-)?\\d{4}',
  IE: '[AC-FHKNPRTV-Y]\\d{2}[ ]?[0-9AC-FHKNPRTV-Y]{4}',
  IT: '(?:I-)?\\d{5}',
  LT: '(?:LT-)?\\d{5}',
  LU: '(?:L-)?\\d{4}',
  LV: '(?:LV-)?\\d{4}',
  MT: '[A-Z]{3} ?\\d{4}',
  NL: '\\d{4} ?[A-Z]{2}',
  PL: '\\d{2}-\\d{3}',
  PT: '\\d{4}-\\d{3}',
  RO: '\\d{6}',
  SE: '(?:S-|SE-)?\\d{3} ?\\d{2}',
  SI: '(?:SI-)?\\d{4}',
  SK: '(?:SK-)?\\d{3} ?\\d{2}',
  XI: 'BT\\d{1,2} ?\\d[A-Z]{2}',
};

/** Countries whose addresses put the town before the postcode (`Rīga, LV-1050`, `VALLETTA VLT 1117`). */
export const TOWN_BEFORE_POSTCODE: ReadonlySet<string> = new Set(['IE', 'LV', 'MT', 'XI']);

/** Any of the formats, for an address whose country is not known. */
const ANY_FORMAT = [...new Set(Object.values(POSTCODE_FORMATS))].join('|');

/** A postcode as a whole word of a line (case-insensitive). */
export function postcodePattern(country: string | undefined): RegExp {
  const format = (country && POSTCODE_FORMATS[country.toUpperCase()]) || ANY_FORMAT;
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${format})(?![\\p{L}\\p{N}])`, 'giu');
}

/** A postcode as compared: upper case, no spaces or dashes, no country prefix. */
export function normalisePostcode(postcode: string): string {
  return postcode
    .toUpperCase()
    .trim()
    .replace(/^[A-Z]{1,3}-(?=\d)/, '')
    .replace(/[\s-]+/g, '');
}
