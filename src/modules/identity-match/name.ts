/**
 * Company names: folded and transliterated words, the legal form read apart, conjunctions and
 * articles left out. The score is a word-weighted Dice coefficient: each word of one name is paired
 * with the most similar unpaired word of the other (order does not matter), and counts with its
 * letters times that similarity. A pair counts only from `WORD_PAIR_FLOOR` on.
 *
 * The verdict is stricter than the score: a name matches when the letters of the words spelled the
 * same on both sides make at least `NAME_MATCH_THRESHOLD` of all letters. A word spelled differently
 * (`Schmidt` for `Schmitt`) keeps the score high but does not count towards the match: a look-alike
 * name is how a different company's number is passed off, and it reads exactly like a typo.
 */
import { sameLegalForm, splitLegalForm } from './legal-forms.js';
import { roundScore, similarity } from './similarity.js';
import { looseKey, words } from './text.js';

/** Share of letters in identically spelled words (and an agreeing legal form) for a match. */
export const NAME_MATCH_THRESHOLD = 0.85;

/** Below this similarity two words are not a pair at all. */
export const WORD_PAIR_FLOOR = 0.75;

/** The weight of a legal form in the score, as if it were a word of this many letters. */
const LEGAL_FORM_WEIGHT = 4;

/** Words that join names rather than name anything (`&` is already punctuation). */
const JOINING_WORDS: ReadonlySet<string> = new Set([
  'and',
  'und',
  'et',
  'en',
  'og',
  'och',
  'ja',
  'es',
  'si',
  'ir',
  'un',
  'kai',
  'the',
]);

export interface NormalisedName {
  /** The name's own words, loosely spelled (see `looseKey`). */
  words: string[];
  /** The canonical legal form, or `null`. */
  form: string | null;
}

export function normaliseName(name: string): NormalisedName {
  const split = splitLegalForm(words(name));
  return {
    words: split.words.filter((word) => !JOINING_WORDS.has(word)).map(looseKey),
    form: split.form,
  };
}

export interface NameComparison {
  score: number;
  match: boolean;
}

interface Pairing {
  /** Letters weighted by similarity. */
  similar: number;
  /** Letters of identically spelled pairs. */
  identical: number;
}

/** Greedy best pairing of two word lists (most similar pairs first). */
function pairWords(left: readonly string[], right: readonly string[]): Pairing {
  const candidates = left.flatMap((a, i) =>
    right.map((b, j) => ({ i, j, weight: a.length + b.length, sim: similarity(a, b) })),
  );
  candidates.sort((x, y) => y.sim - x.sim || y.weight - x.weight);
  const usedLeft = new Set<number>();
  const usedRight = new Set<number>();
  const pairing: Pairing = { similar: 0, identical: 0 };
  for (const pair of candidates) {
    if (pair.sim < WORD_PAIR_FLOOR) break;
    if (usedLeft.has(pair.i) || usedRight.has(pair.j)) continue;
    usedLeft.add(pair.i);
    usedRight.add(pair.j);
    pairing.similar += pair.sim * pair.weight;
    if (pair.sim === 1) pairing.identical += pair.weight;
  }
  return pairing;
}

const letters = (list: readonly string[]) => list.reduce((sum, word) => sum + word.length, 0);

/** Compares the name a customer gave with the registered one. */
export function compareNames(claimed: string, registered: string): NameComparison {
  const a = normaliseName(claimed);
  const b = normaliseName(registered);
  if (a.words.length === 0 || b.words.length === 0) {
    // Nothing but a legal form (or nothing at all) on one side: only identical texts match.
    const same = a.words.join('') === b.words.join('') && a.form === b.form;
    return { score: same ? 1 : 0, match: same };
  }
  const forms = a.form !== null && b.form !== null;
  const formAgrees = forms && sameLegalForm(a.form as string, b.form as string);
  const formLetters = forms ? 2 * LEGAL_FORM_WEIGHT : 0;
  const formMatched = formAgrees ? formLetters : 0;
  const total = letters(a.words) + letters(b.words) + formLetters;
  // Words written together or apart (`Müller-Bau`, `MuellerBau`) are the same name.
  const joined = a.words.join('') === b.words.join('');
  const pairing = joined
    ? { similar: total - formLetters, identical: total - formLetters }
    : pairWords(a.words, b.words);
  const score = (pairing.similar + formMatched) / total;
  const identical = (pairing.identical + formMatched) / total;
  return { score: roundScore(score), match: identical >= NAME_MATCH_THRESHOLD };
}
