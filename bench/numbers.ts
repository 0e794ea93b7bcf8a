import { getVatNumberRule, parseVatNumber, type VatPrefix } from '../src/modules/vat-numbers/index.js';

/** Mulberry32: a seeded PRNG so every run uses the same numbers. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `count` distinct well-formed numbers of a country (valid check digits), made by varying the digits
 * of the country's example number until the parser accepts them.
 */
export function wellFormedNumbers(prefix: VatPrefix, count: number, seed = 1): string[] {
  const random = prng(seed * 7919 + prefix.charCodeAt(0) * 31 + prefix.charCodeAt(1));
  const example = getVatNumberRule(prefix).example;
  const found = new Set<string>();
  for (let tries = 0; found.size < count && tries < count * 5_000; tries++) {
    let candidate = '';
    for (let i = 0; i < example.length; i++) {
      const ch = example[i] as string;
      candidate += i >= 2 && ch >= '0' && ch <= '9' ? String(Math.floor(random() * 10)) : ch;
    }
    const parsed = parseVatNumber(candidate);
    if (parsed.ok) found.add(parsed.normalised);
  }
  if (found.size < count) throw new Error(`only ${found.size} numbers for ${prefix}`);
  return [...found];
}
