/**
 * An estimate of the bits of randomness in a secret, counted low on purpose. A character does not
 * count when it continues the step of the two before it (`aaaa`, `abcd`, `1357`, `zyx`) or completes
 * a group of three that came earlier (`abcabc`, `Password1Password1`); the others count by how often
 * each occurs, as `n × H` with H their Shannon entropy per character. No dictionary: a value made
 * up of words can score well and still be guessable, so secrets should come from a random source.
 */
export function estimatedBits(secret: string): number {
  const chars = Array.from(secret);
  const counted = new Map<string, number>();
  const triples = new Set<string>();
  let n = 0;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    let predictable = false;
    if (i >= 2) {
      const [a, b] = [chars[i - 2] as string, chars[i - 1] as string];
      const step = codePoint(c) - codePoint(b);
      const triple = a + b + c;
      predictable = step === codePoint(b) - codePoint(a) || triples.has(triple);
      triples.add(triple);
    }
    if (predictable) continue;
    counted.set(c, (counted.get(c) ?? 0) + 1);
    n++;
  }
  let bits = 0;
  for (const count of counted.values()) bits -= count * Math.log2(count / n);
  return bits;
}

function codePoint(c: string): number {
  return c.codePointAt(0) ?? 0;
}

/** The least a configured secret must have: characters, and `estimatedBits`. */
export const SECRET_MINIMUM = { length: 32, bits: 64 } as const;

/**
 * Why `secret` is too weak to be a credential (words to follow "is"), or null when it is strong
 * enough: at least `SECRET_MINIMUM.length` characters and `SECRET_MINIMUM.bits` estimated bits.
 */
export function weakness(secret: string, minimum: { length: number; bits: number } = SECRET_MINIMUM) {
  const length = Array.from(secret).length;
  if (length < minimum.length)
    return `too short (${length} character${length === 1 ? '' : 's'}; at least ${minimum.length} are needed)`;
  const bits = Math.floor(estimatedBits(secret));
  if (bits < minimum.bits)
    return `too easy to guess (about ${bits} bits of randomness, at least ${minimum.bits} are needed: it repeats characters or groups, or runs like abcd or 1234)`;
  return null;
}
