import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseVatNumber, SUPPORTED_PREFIXES } from '../../../src/modules/vat-numbers/index.js';

/** Mulberry32: small deterministic PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABETS = [
  '0123456789',
  '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ',
  '0123456789 .-/:()+*abcdefghijklmnopqrstuvwxyzMWSTVA',
  '\u00a0\u2009\u200b\ufeff\u3000\uff10\uff21éßÄ😀\ud800\udfff\u0000\n',
];

describe('vat-numbers: never throws', () => {
  it('parses thousands of random strings without throwing, with a well-formed result', () => {
    const rnd = prng(20240601);
    const inputs: string[] = [
      '',
      ' ',
      '\u0000',
      '\ud800',
      'DE',
      'CHE',
      'GBGD',
      'NOMVA',
      'IE+',
      'x'.repeat(65),
    ];
    for (let k = 0; k < 5000; k++) {
      const alphabet = ALPHABETS[Math.floor(rnd() * ALPHABETS.length)] ?? '';
      const len = Math.floor(rnd() * (rnd() < 0.05 ? 500 : 20));
      let s = rnd() < 0.7 ? (SUPPORTED_PREFIXES[Math.floor(rnd() * SUPPORTED_PREFIXES.length)] ?? '') : '';
      if (rnd() < 0.2) s = s.toLowerCase();
      for (let i = 0; i < len; i++) s += alphabet[Math.floor(rnd() * alphabet.length)] ?? '';
      inputs.push(s);
      // arbitrary UTF-16 code units, lone surrogates included
      let u = '';
      for (let i = 0; i < len; i++) u += String.fromCharCode(Math.floor(rnd() * 0x10000));
      inputs.push(u);
    }
    for (const input of inputs) {
      const r = parseVatNumber(input);
      if (r.ok) {
        assert.ok(SUPPORTED_PREFIXES.includes(r.country));
        assert.equal(parseVatNumber(r.normalised).ok, true);
      } else {
        assert.ok(['country', 'characters', 'length', 'checksum', 'unsupported_country'].includes(r.reason));
        assert.equal(typeof r.message, 'string');
      }
    }
  });

  it('returns a failure, not an exception, for non-string input from untyped callers', () => {
    for (const value of [undefined, null, 42, {}, []]) {
      const r = parseVatNumber(value as unknown as string);
      assert.equal(r.ok, false);
    }
  });
});
