import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  getVatNumberRule,
  isSupportedPrefix,
  isValidGermanVatDigits,
  parseVatNumber,
  SUPPORTED_PREFIXES,
} from '../../../src/modules/vat-numbers/index.js';
import { VALID } from './fixtures.js';

describe('vat-numbers: real valid numbers', () => {
  it('supports the 27 EU states, XI, GB, CH and NO', () => {
    assert.equal(SUPPORTED_PREFIXES.length, 31);
    for (const p of ['AT', 'EL', 'XI', 'GB', 'CH', 'NO']) assert.ok(isSupportedPrefix(p));
    for (const p of ['GR', 'US', 'LI', 'de', '']) assert.ok(!isSupportedPrefix(p));
  });

  for (const prefix of SUPPORTED_PREFIXES) {
    it(`${prefix}: at least 20 published numbers parse as valid, canonical form is stable`, () => {
      const samples = VALID[prefix];
      assert.ok(samples.length >= 20, `${prefix} has ${samples.length} samples`);
      const rule = getVatNumberRule(prefix);
      const regex = new RegExp(rule.regex);
      for (const input of samples) {
        const r = parseVatNumber(input);
        assert.ok(r.ok, `${input}: ${r.ok ? '' : r.message}`);
        assert.equal(r.country, prefix);
        assert.equal(r.isoCountry, prefix === 'EL' ? 'GR' : prefix);
        assert.match(r.normalised, regex, input);
        assert.match(r.national, new RegExp(`^(?:${rule.formats.join('|')})$`));
        const again = parseVatNumber(r.normalised);
        assert.deepEqual(again, r, `re-parsing ${r.normalised}`);
      }
    });

    it(`${prefix}: the documented example is valid and canonical`, () => {
      const rule = getVatNumberRule(prefix);
      const r = parseVatNumber(rule.example);
      assert.ok(r.ok, rule.example);
      assert.equal(r.normalised, rule.example);
      assert.ok(rule.formatDescription.length > 0);
    });
  }

  it('isValidGermanVatDigits checks the 9 digits after DE', () => {
    for (const input of VALID.DE) {
      const r = parseVatNumber(input);
      assert.ok(r.ok && isValidGermanVatDigits(r.national), input);
    }
    assert.equal(isValidGermanVatDigits('136308783'), true);
    assert.equal(isValidGermanVatDigits('136308784'), false);
    assert.equal(isValidGermanVatDigits('13630878'), false);
    assert.equal(isValidGermanVatDigits('036308783'), false);
    assert.equal(isValidGermanVatDigits('DE136308783'), false);
    assert.equal(isValidGermanVatDigits('13630878X'), false);
    assert.equal(isValidGermanVatDigits(''), false);
  });

  it('hard cases documented in the issue are accepted', () => {
    const cases: Array<[string, string]> = [
      // Czech: legal entity (8), special entity (9, starts with 6), birth numbers (9 pre-1954, 10)
      ['CZ25123891', 'CZ25123891'],
      ['CZ640903926', 'CZ640903926'],
      ['CZ 450 33 145', 'CZ45033145'],
      ['CZ 736028/5163', 'CZ7360285163'], // woman (month + 50)
      ['CZ 6956220612', 'CZ6956220612'], // month 56: woman born in June
      // Spanish NIF forms
      ['ES 54362315K', 'ES54362315K'], // DNI
      ['ES X5277343Q', 'ESX5277343Q'], // NIE X
      ['ES Y5277343F', 'ESY5277343F'], // NIE Y
      ['ES Z5277343K', 'ESZ5277343K'], // NIE Z
      ['ES Q-2818015-F', 'ESQ2818015F'], // CIF with check letter
      ['ES A08370314', 'ESA08370314'], // CIF with check digit
      // Irish old and new formats
      ['IE8D79739I', 'IE8D79739I'],
      ['IE9Y71814N', 'IE9Y71814N'],
      ['IE6433435IH', 'IE6433435IH'],
      ['IE6599001W', 'IE6599001W'],
      // French letter keys and Monaco
      ['FR K 7399859412', 'FRK7399859412'],
      ['FR4Z123456782', 'FR4Z123456782'],
      ['FR32000000330', 'FR32000000330'],
      // Dutch 11-proof and post-2020 mod-97 numbers
      ['NL003376734B77', 'NL003376734B77'],
      ['NL002455799B11', 'NL002455799B11'],
      ['NL4495445B01', 'NL004495445B01'],
      // Belgian old 9-digit form and the (0) notation
      ['BE 444.503.092', 'BE0444503092'],
      ['BE (0)468.561.072', 'BE0468561072'],
      // Italian office code 999 is not needed here; Luhn + office 020
      ['IT 00743110157', 'IT00743110157'],
      // Romanian short numbers
      ['RO 573768', 'RO573768'],
      ['RO 241 30 20', 'RO2413020'],
      // Lithuanian 12 digits
      ['LT 100001354118', 'LT100001354118'],
      // Cyprus starting with 0 and 9
      ['CY00632993 F', 'CY00632993F'],
      ['CY99200002N', 'CY99200002N'],
      // Bulgarian 10-digit individuals
      ['BG7523169263', 'BG7523169263'],
      // Latvian natural person vs legal entity
      ['LV 40003521600', 'LV40003521600'],
      // Swedish with 01
      ['SE 556.383.740.901', 'SE556383740901'],
      // GB: old modulus 97, 9755 scheme, branch numbers, government departments and health authorities
      ['GB 002 4257 28', 'GB002425728'],
      ['GB 100190874', 'GB100190874'],
      ['GB 242338087388', 'GB242338087388'],
      ['GBGD100', 'GBGD100'],
      ['GB HA 501', 'GBHA501'],
      ['XI 980 7806 84', 'XI980780684'],
      // Greek old 8-digit form
      ['EL 94051189', 'EL094051189'],
    ];
    for (const [input, normalised] of cases) {
      const r = parseVatNumber(input);
      assert.ok(r.ok, `${input}: ${r.ok ? '' : r.message}`);
      assert.equal(r.normalised, normalised, input);
    }
  });
});
