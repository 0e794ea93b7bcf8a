/**
 * Streets: the street's name and its house numbers are compared apart. Street-type words and their
 * abbreviations are one canonical token (`Str.` = `Straße` = `strasse` → `str`, `ul.` = `ulica` →
 * `ul`), also at the end of a German or Dutch compound (`Musterstr.` = `Musterstraße`), and a
 * street written with or without its type word (`ul. Chemików` against `CHEMIKÓW`) is compared both
 * ways. House numbers must agree: each number the customer gave must be one of the registered ones
 * (`38` against Czech `1184/38`, `12` against `12-14`), ignoring leading zeros.
 */
import { roundScore, similarity } from './similarity.js';
import { looseKey, words } from './text.js';

/** Street-name similarity from which two streets match (when their house numbers agree). */
export const STREET_MATCH_THRESHOLD = 0.85;

/** Factor on the street-name similarity when the house numbers disagree. */
const NUMBER_DISAGREEMENT_FACTOR = 0.5;

/**
 * Street-type words (folded) → canonical token. Sources: the member states' postal addressing
 * standards as published by the Universal Postal Union (street types and their abbreviations).
 */
export const STREET_TYPES: Readonly<Record<string, string>> = {
  // German, Dutch
  strasse: 'str',
  str: 'str',
  straat: 'str',
  platz: 'pl',
  gasse: 'g',
  allee: 'allee',
  // Polish, Czech, Slovak, Bulgarian (ул.), Slovenian, Croatian
  ulica: 'ul',
  ul: 'ul',
  ulice: 'ul',
  aleja: 'al',
  aleje: 'al',
  al: 'al',
  plac: 'pl',
  pl: 'pl',
  osiedle: 'os',
  os: 'os',
  namesti: 'nam',
  namestie: 'nam',
  nam: 'nam',
  trida: 'tr',
  bulevard: 'bd',
  bul: 'bd',
  // French, Belgian, Luxembourgish
  rue: 'rue',
  avenue: 'av',
  av: 'av',
  ave: 'av',
  boulevard: 'bd',
  bd: 'bd',
  bld: 'bd',
  blvd: 'bd',
  place: 'pl',
  chemin: 'ch',
  route: 'rte',
  rte: 'rte',
  impasse: 'imp',
  imp: 'imp',
  // Italian
  via: 'via',
  viale: 'vle',
  vle: 'vle',
  piazza: 'pza',
  pza: 'pza',
  pzza: 'pza',
  corso: 'cso',
  cso: 'cso',
  // Spanish, Portuguese
  calle: 'c',
  avenida: 'av',
  avda: 'av',
  plaza: 'pza',
  paseo: 'po',
  carretera: 'ctra',
  ctra: 'ctra',
  rua: 'rua',
  travessa: 'tv',
  // Romanian
  strada: 'str',
  bulevardul: 'bd',
  bdul: 'bd',
  soseaua: 'sos',
  sos: 'sos',
  calea: 'cal',
  // Hungarian
  utca: 'u',
  u: 'u',
  ut: 'ut',
  ter: 'ter',
  // Greek (Λεωφόρος, οδός)
  leoforos: 'leof',
  leof: 'leof',
  odos: 'od',
  // English (Ireland, Malta, Northern Ireland)
  street: 'st',
  st: 'st',
  road: 'rd',
  rd: 'rd',
  lane: 'ln',
  ln: 'ln',
  drive: 'dr',
  dr: 'dr',
  square: 'sq',
  sq: 'sq',
  // Nordic
  gatan: 'gatan',
  gata: 'gatan',
  vej: 'vej',
  gade: 'gade',
  katu: 'katu',
  tie: 'tie',
};

/** Compound endings that are a street type (`Hauptstraße`, `Musterstr.`, `Kerkstraat`, `Marktplatz`). */
const COMPOUND_ENDINGS: ReadonlyArray<[string, string]> = [
  ['strasse', 'str'],
  ['straat', 'str'],
  ['str', 'str'],
  ['platz', 'pl'],
  ['gasse', 'g'],
];

/** Words that only announce a number (`Nr. 5`, `n° 5`, `No 5`). */
const NUMBER_MARKERS: ReadonlySet<string> = new Set(['nr', 'no', 'n', 'numero', 'number', 'cp', 'c']);

export interface NormalisedStreet {
  /** The street's name as words, types canonical. */
  words: string[];
  /** Which of `words` are street-type tokens written apart. */
  typeWords: boolean[];
  /** House numbers, lower case, without leading zeros (`12a`, `1184`, `38`). */
  numbers: string[];
}

function canonicalWord(word: string): { word: string; type: boolean } {
  const type = STREET_TYPES[word];
  if (type) return { word: type, type: true };
  for (const [ending, canonical] of COMPOUND_ENDINGS) {
    if (word.length > ending.length + 2 && word.endsWith(ending)) {
      return { word: looseKey(word.slice(0, -ending.length)) + canonical, type: false };
    }
  }
  return { word: looseKey(word), type: false };
}

export function normaliseStreet(street: string): NormalisedStreet {
  const all = words(street);
  const result: NormalisedStreet = { words: [], typeWords: [], numbers: [] };
  all.forEach((word, index) => {
    if (/\d/.test(word)) {
      result.numbers.push(word.replace(/^0+(?=\d)/, ''));
      return;
    }
    const previous = all[index - 1];
    // A single letter after a number is part of it (`12 a` = `12a`).
    if (word.length === 1 && previous !== undefined && /\d$/.test(previous) && result.numbers.length > 0) {
      result.numbers[result.numbers.length - 1] += word;
      return;
    }
    const next = all[index + 1];
    if (NUMBER_MARKERS.has(word) && (next === undefined || /\d/.test(next))) return;
    const canonical = canonicalWord(word);
    result.words.push(canonical.word);
    result.typeWords.push(canonical.type);
  });
  return result;
}

/** The street's name written together, with and without type words written apart. */
function nameForms(street: NormalisedStreet): string[] {
  const all = street.words.join('');
  const withoutTypes = street.words.filter((_, i) => !street.typeWords[i]).join('');
  return withoutTypes !== '' && withoutTypes !== all ? [all, withoutTypes] : [all];
}

function numbersAgree(claimed: readonly string[], registered: readonly string[]): boolean {
  if (claimed.length === 0) return registered.length === 0;
  return claimed.every((number) => registered.includes(number));
}

export interface StreetComparison {
  score: number;
  match: boolean;
}

/** Compares a claimed street with one registered street (one line or segment of an address). */
export function compareStreet(claimed: string, registered: string): StreetComparison {
  const a = normaliseStreet(claimed);
  const b = normaliseStreet(registered);
  let name = 0;
  for (const left of nameForms(a)) {
    for (const right of nameForms(b)) name = Math.max(name, similarity(left, right));
  }
  if (a.words.length === 0 && b.words.length === 0) name = 1;
  const agree = numbersAgree(a.numbers, b.numbers);
  const score = agree ? name : name * NUMBER_DISAGREEMENT_FACTOR;
  return { score: roundScore(score), match: agree && name >= STREET_MATCH_THRESHOLD };
}

/** The best comparison over several registered candidates (address lines or segments). */
export function compareStreetCandidates(claimed: string, candidates: readonly string[]): StreetComparison {
  let best: StreetComparison = { score: 0, match: false };
  for (const candidate of candidates) {
    const comparison = compareStreet(claimed, candidate);
    if (comparison.match && !best.match) best = comparison;
    else if (comparison.match === best.match && comparison.score > best.score) best = comparison;
  }
  return best;
}
