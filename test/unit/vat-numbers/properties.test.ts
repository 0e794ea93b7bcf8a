import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gbChecksum } from '../../../src/modules/vat-numbers/countries/gb.js';
import { nlElevenProof, nlMod97 } from '../../../src/modules/vat-numbers/countries/nl.js';
import type { VatPrefix } from '../../../src/modules/vat-numbers/index.js';
import { parseVatNumber, SUPPORTED_PREFIXES } from '../../../src/modules/vat-numbers/index.js';
import { VALID } from './fixtures.js';

type Mutant = { original: string; mutant: string; position: number };

/** Every canonical sample of a country with each digit of its national part replaced by each other digit. */
function mutants(prefix: VatPrefix, filter: (normalised: string) => boolean = () => true): Mutant[] {
  const out: Mutant[] = [];
  const start = prefix === 'CH' ? 3 : 2;
  for (const input of VALID[prefix]) {
    const r = parseVatNumber(input);
    assert.ok(r.ok, input);
    const n = r.normalised;
    if (!filter(n)) continue;
    for (let i = start; i < n.length; i++) {
      const c = n.charCodeAt(i);
      if (c < 48 || c > 57) continue;
      for (let d = 48; d <= 57; d++) {
        if (d === c) continue;
        out.push({
          original: n,
          mutant: n.slice(0, i) + String.fromCharCode(d) + n.slice(i + 1),
          position: i,
        });
      }
    }
  }
  return out;
}

// Algorithms that detect every single-digit substitution (see the comment on each validator):
// Luhn (AT, IT, SE, the FR SIREN), ISO 7064 MOD 11,10 (DE, HR), ISO 7064 MOD 97-10 style checks
// with a prime modulus larger than any single-digit change (BE, LU, MT), weighted mod 11 with
// non-zero weights and an injective check map (DK, FI, PL, SI, CH, NO, LV legal entities), weighted
// mod 10 with weights coprime to 10 (EE, HU), mod 23 (ES, IE), the Cypriot letter map (CY), and
// divisibility by 11 (SK).
const FULL_DETECTION: readonly VatPrefix[] = [
  'AT',
  'BE',
  'CY',
  'DE',
  'DK',
  'EE',
  'ES',
  'FI',
  'HR',
  'HU',
  'IE',
  'IT',
  'LU',
  'MT',
  'PL',
  'SE',
  'SI',
  'SK',
  'CH',
  'NO',
];

describe('vat-numbers: single-digit substitutions', () => {
  for (const prefix of FULL_DETECTION) {
    it(`${prefix}: every single-digit substitution of every sample is rejected`, () => {
      const all = mutants(prefix);
      assert.ok(all.length > 100);
      for (const m of all) {
        const r = parseVatNumber(m.mutant);
        assert.ok(!r.ok, `${m.mutant} (from ${m.original}) was accepted`);
        assert.ok(['checksum', 'characters', 'length'].includes(r.reason), `${m.mutant}: ${r.reason}`);
      }
    });
  }

  it('FR: numeric keys detect every substitution; alphanumeric keys every substitution in the SIREN', () => {
    for (const m of mutants('FR')) {
      const numericKey = /^FR\d\d/.test(m.original);
      if (!numericKey && m.position < 4) continue;
      assert.ok(!parseVatNumber(m.mutant).ok, `${m.mutant} (from ${m.original})`);
    }
  });

  it('LV: legal entities detect every substitution', () => {
    for (const m of mutants('LV', (n) => n.charCodeAt(2) > 51)) {
      if (m.position === 2 && m.mutant.charCodeAt(2) <= 51) continue; // becomes a personal code
      assert.ok(!parseVatNumber(m.mutant).ok, `${m.mutant} (from ${m.original})`);
    }
  });

  it('NL: a substitution never passes the same check as the original', () => {
    // Each of the two checks alone detects every substitution in the 9 digits; the union does not.
    for (const m of mutants('NL')) {
      const national = m.mutant.slice(2);
      const original = m.original.slice(2);
      if (nlElevenProof(original)) assert.ok(m.position >= 11 || !nlElevenProof(national), m.mutant);
      if (nlMod97(original)) assert.ok(!nlMod97(national), m.mutant);
    }
  });

  it('GB/XI: a substitution in the first 9 digits always changes the mod-97 remainder', () => {
    // The remainder moves by w·δ with |w·δ| ≤ 90 < 97; it can land on another accepted remainder
    // (0, 42, 55), so not every substitution is rejected.
    for (const prefix of ['GB', 'XI'] as const) {
      for (const m of mutants(prefix, (n) => /^..\d+$/.test(n))) {
        if (m.position >= 11) continue; // branch digits are not covered by the check
        assert.notEqual(gbChecksum(m.mutant.slice(2)), gbChecksum(m.original.slice(2)), m.mutant);
      }
    }
  });

  // Algorithms that fold a remainder of 10 onto the digit 0 (EL, PT, LT, RO, LV persons), accept a
  // union of schemes (BG 10-digit, CZ) or carry no check digit (CZ pre-1954 birth numbers) cannot
  // reject every substitution. They still reject the large majority; the rates below are what the
  // published samples give.
  const WEAK: ReadonlyArray<[VatPrefix, number]> = [
    ['BG', 0.85],
    ['CZ', 0.8],
    ['EL', 0.85],
    ['LT', 0.85],
    ['PT', 0.85],
    ['RO', 0.85],
    ['GB', 0.9],
    ['XI', 0.9],
    ['NL', 0.8], // the two digits after B are not covered by the 11-proof
  ];
  for (const [prefix, minRate] of WEAK) {
    it(`${prefix}: at least ${minRate * 100}% of single-digit substitutions are rejected`, () => {
      const all = mutants(prefix);
      let rejected = 0;
      for (const m of all) if (!parseVatNumber(m.mutant).ok) rejected++;
      const rate = rejected / all.length;
      assert.ok(rate >= minRate, `${prefix}: ${rejected}/${all.length} = ${rate.toFixed(3)}`);
    });
  }

  it('every supported prefix is covered by one of the properties above', () => {
    const covered = new Set<string>([...FULL_DETECTION, ...WEAK.map(([p]) => p), 'FR', 'LV']);
    for (const p of SUPPORTED_PREFIXES) assert.ok(covered.has(p), p);
  });
});
