/**
 * Registered addresses: the street, postcode and town read out of a registry's free-text address
 * (VIES gives one string, lines separated by `\n`, in each member state's own layout), and the
 * comparison of towns.
 *
 * Layouts seen in recorded VIES answers (sources in docs/validation.md, "Reading a VIES address"):
 * `VIA NAZIONALE 91 \n00184 ROMA RM\n` (IT, town with its province), `17 BD HAUSSMANN\n75009 PARIS`
 * (FR), `22, BOULEVARD ROYAL\nL-2449  LUXEMBOURG` (LU), `MARKT 1\n1000  BRUSSEL` (BE),
 * `CHEMIKÓW 7\n09-411 PŁOCK` (PL), `Příkladná 1234/5\nPRAHA 1 - NOVÉ MĚSTO\n110 00  PRAHA 1` (CZ),
 * `Nová 1184/38\n90024 Veľký Biel\nSlovensko` (SK, with the country), `SZÉCHENYI UTCA 2 1054
 * BUDAPEST` (HU, one line) and `3RD FLOOR, GORDON HOUSE, BARROW STREET, DUBLIN 4` (IE, no postcode).
 */
import { postcodePattern, TOWN_BEFORE_POSTCODE } from './postcodes.js';
import { roundScore, similarity } from './similarity.js';
import { looseKey, words } from './text.js';

/** Town similarity from which two towns match. */
export const CITY_MATCH_THRESHOLD = 0.85;

/** Country names that end some registries' addresses (folded), in the member states' languages and English. */
const COUNTRY_LINES: ReadonlySet<string> = new Set(
  [
    'Österreich',
    'Austria',
    'Belgique',
    'België',
    'Belgium',
    'България',
    'Bulgaria',
    'Κύπρος',
    'Cyprus',
    'Česká republika',
    'Czech Republic',
    'Czechia',
    'Deutschland',
    'Germany',
    'Danmark',
    'Denmark',
    'Eesti',
    'Estonia',
    'Ελλάδα',
    'Greece',
    'España',
    'Spain',
    'Suomi',
    'Finland',
    'France',
    'Hrvatska',
    'Croatia',
    'Magyarország',
    'Hungary',
    'Éire',
    'Ireland',
    'Italia',
    'Italy',
    'Lietuva',
    'Lithuania',
    'Luxembourg',
    'Latvija',
    'Latvia',
    'Malta',
    'Nederland',
    'Netherlands',
    'Polska',
    'Poland',
    'Portugal',
    'România',
    'Romania',
    'Sverige',
    'Sweden',
    'Slovenija',
    'Slovenia',
    'Slovensko',
    'Slovenská republika',
    'Slovakia',
    'United Kingdom',
  ].map((name) => words(name).join(' ')),
);

export interface AddressParts {
  /** The line that looks most like the street (the first with a house number), or `null`. */
  street: string | null;
  postcode: string | null;
  city: string | null;
  /** Every line and comma-separated part before the postcode: a claimed street is compared with each. */
  streetCandidates: string[];
}

const segments = (line: string) =>
  line
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');

const trimSeparators = (text: string) => text.replace(/^[\s,;:–—-]+|[\s,;:–—-]+$/g, '');

function streetParts(lines: string[], city: string | null, postcode: string | null): AddressParts {
  const streetLines = lines.map(trimSeparators).filter((line) => line !== '');
  const candidates = [...new Set([...streetLines, ...streetLines.flatMap(segments)])];
  const street = streetLines.find((line) => /\d/.test(line)) ?? streetLines[0] ?? null;
  return { street, postcode, city: city && city !== '' ? city : null, streetCandidates: candidates };
}

/** Splits the line holding the postcode into what stands before it and the town. */
function aroundPostcode(line: string, match: RegExpMatchArray, country: string | undefined) {
  const start = match.index ?? 0;
  const before = trimSeparators(line.slice(0, start));
  const after = trimSeparators(line.slice(start + match[0].length));
  const townFirst =
    (country !== undefined && TOWN_BEFORE_POSTCODE.has(country.toUpperCase())) || after === '';
  if (!townFirst) return { before: before === '' ? [] : [before], city: after };
  const parts = segments(before);
  const city = parts.pop() ?? null;
  return { before: parts, city };
}

/**
 * The postcode and its line: the last line holding the country's format; failing that, a line
 * after the first that starts with any member state's format (an address not written the way its
 * country writes postcodes).
 */
function findPostcode(lines: readonly string[], country: string | undefined) {
  const own = postcodePattern(country);
  for (let i = lines.length - 1; i >= 0; i--) {
    const match = [...(lines[i] ?? '').matchAll(own)].pop();
    if (match) return { i, match };
  }
  if (country === undefined) return undefined;
  const any = postcodePattern(undefined);
  for (let i = lines.length - 1; i >= 1; i--) {
    const match = [...(lines[i] ?? '').matchAll(any)].find((m) => m.index === 0);
    if (match) return { i, match };
  }
  return undefined;
}

/** Reads the street, postcode and town out of a free-text address. */
export function parseAddress(text: string, country?: string): AddressParts {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  while (lines.length > 1 && COUNTRY_LINES.has(words(lines[lines.length - 1] ?? '').join(' '))) lines.pop();
  const found = findPostcode(lines, country);
  if (found) {
    const { i, match } = found;
    const line = lines[i] ?? '';
    const around = aroundPostcode(line, match, country);
    if (around.city === null && i > 0) {
      // The postcode alone on its line, the town on the line before (`LONDON\nEC2A 2FA`).
      return streetParts(lines.slice(0, i - 1), lines[i - 1] ?? null, match[0]);
    }
    return streetParts([...lines.slice(0, i), ...around.before], around.city, match[0]);
  }
  if (lines.length >= 2) return streetParts(lines.slice(0, -1), lines[lines.length - 1] ?? null, null);
  const parts = segments(lines[0] ?? '');
  if (parts.length >= 2) return streetParts(parts.slice(0, -1), parts[parts.length - 1] ?? null, null);
  return streetParts(parts, null, null);
}

/** A town's forms to compare: as written, without district numbers, `CEDEX` or an Italian province code. */
function townForms(town: string): string[] {
  const all = words(town);
  const forms = [all];
  const cedex = all.indexOf('cedex');
  const base = cedex > 0 ? all.slice(0, cedex) : all;
  const withoutNumbers = [...base];
  while (withoutNumbers.length > 1 && /\d/.test(withoutNumbers[withoutNumbers.length - 1] ?? '')) {
    withoutNumbers.pop();
  }
  forms.push(withoutNumbers);
  const last = withoutNumbers[withoutNumbers.length - 1] ?? '';
  if (withoutNumbers.length > 1 && last.length === 2) forms.push(withoutNumbers.slice(0, -1));
  return [...new Set(forms.map((form) => form.map(looseKey).join('')))].filter((form) => form !== '');
}

export interface CityComparison {
  score: number;
  match: boolean;
}

export function compareCity(claimed: string, registered: string): CityComparison {
  let score = 0;
  for (const a of townForms(claimed)) {
    for (const b of townForms(registered)) score = Math.max(score, similarity(a, b));
  }
  return { score: roundScore(score), match: score >= CITY_MATCH_THRESHOLD };
}
