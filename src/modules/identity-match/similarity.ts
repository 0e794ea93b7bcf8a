/**
 * String similarity for the identity match: 1 minus the Levenshtein distance (fastest-levenshtein)
 * over the longer length, so one wrong letter in an eight-letter word is 0.875.
 */
import { distance } from 'fastest-levenshtein';

export function similarity(a: string, b: string): number {
  if (a === b) return 1;
  const longest = Math.max(a.length, b.length);
  if (longest === 0) return 1;
  return 1 - distance(a, b) / longest;
}

/** A score as the answer carries it: three decimals. */
export function roundScore(score: number): number {
  return Math.round(score * 1000) / 1000;
}
