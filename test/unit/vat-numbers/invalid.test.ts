import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ParseFailureReason } from '../../../src/modules/vat-numbers/index.js';
import { parseVatNumber } from '../../../src/modules/vat-numbers/index.js';

type Reason = ParseFailureReason | 'unsupported_country';

function expectFailure(input: string, reason: Reason, country: string | null): void {
  const r = parseVatNumber(input);
  const shown = input.length > 80 ? `${input.slice(0, 40)}… (${input.length} chars)` : input;
  assert.equal(r.ok, false, `${shown} was accepted`);
  if (r.ok) return;
  assert.equal(r.reason, reason, `${shown}: ${r.reason} (${r.message})`);
  assert.equal(r.country, country, shown);
  assert.ok(r.message.length > 10 && r.message.endsWith('.'), r.message);
}

describe('vat-numbers: invalid input', () => {
  it('mangled check digits (python-stdnum tests/test_eu_vat.doctest, InvalidChecksum list)', () => {
    const numbers = [
      'ATU 143 43 102',
      'ATU 15169209',
      'ATU46080904',
      'ATU61191628',
      'BE 0406.139.583',
      'BE 0793 013 186',
      'BE 456.973.432',
      'BE697449982',
      'BG 1037735942',
      'BG 131 172 009',
      'BG 147147471',
      'BG 200940556',
      'CY 10246672F',
      'CY-10009489 A',
      'CY-10257074Y',
      'CY00632893 F',
      'CZ 25557481',
      'CZ 48207726',
      'CZ 640913926',
      'CZ 8058018314',
      'DE 125014855',
      'DE 246 495 415',
      'DE 813 91 38 75',
      'DE - 266297673',
      'DK 11 96 56 58',
      'DK 2565 2202',
      'DK-27996592',
      'DK10159817',
      'EE 100 941 558',
      'EE 100525487',
      'EE 101586639',
      'EE101256754',
      'ES 54362415K',
      'ES K-2814015-F',
      'ES-x-2322300w',
      'Es-a48951310',
      'EL 094013834',
      'EL 094068733',
      'EL094501140',
      'EL: 094269805',
      'FR 04409414264',
      'FR 21 326 565 603',
      'FR K 7399859312',
      'FR L 7399859412',
      'IE 4731823H',
      'IE 632 3421 C',
      'IE 5339273F',
      'IE8D79729I',
      'LV 40003189715',
      'LV 90000528022',
      'LV-42103048181',
      'SK 1078449164',
      'SK 2030 237 945',
      'SK 2020457679',
      // other sources: python-stdnum module doctests, jsvat invalid lists
      'GB 802311781',
      'GB001234567',
      'HR33392005962',
      'NO962209018',
      'CHE-107.787.578',
      'PL 5261025422',
      'PT502757192',
      'SE556043606501',
      'SI50223055',
      'MT20390515',
      'LU10000350',
      'HU65730981',
      'FI09853601',
      'IT00743110158',
      'LT119511516',
      'RO18547291',
      'NL002455799B12',
      'NL123456789B01',
    ];
    for (const input of numbers) {
      const r = parseVatNumber(input);
      assert.ok(!r.ok, `${input} was accepted`);
      assert.equal(r.reason, 'checksum', `${input}: ${r.ok ? '' : r.message}`);
    }
  });

  it('wrong lengths', () => {
    expectFailure('DE12345678', 'length', 'DE');
    expectFailure('DE1234567890', 'length', 'DE');
    expectFailure('DE', 'length', 'DE');
    expectFailure('ATU151592092', 'length', 'AT');
    expectFailure('CY-1225903322', 'length', 'CY');
    expectFailure('CY1234567', 'length', 'CY');
    expectFailure('ES B-583784312', 'length', 'ES');
    expectFailure('FR000076090', 'length', 'FR');
    expectFailure('NL006866304B021', 'characters', 'NL');
    expectFailure('NL123456789', 'length', 'NL');
    expectFailure('SE 55643359201', 'length', 'SE');
    expectFailure('SE 5567003255201', 'length', 'SE');
    expectFailure('LT 100001354', 'characters', 'LT'); // 9 digits but the 8th is not 1
    expectFailure('LT 10000135411', 'length', 'LT');
    expectFailure('RO1', 'length', 'RO');
    expectFailure('RO12345678901', 'length', 'RO');
    expectFailure('GB98078068', 'length', 'GB');
    expectFailure('GB9807806842', 'length', 'GB');
    expectFailure('GBGD1000', 'length', 'GB');
    expectFailure('CHE-116.281.71', 'length', 'CH');
    expectFailure('NO 96220901', 'length', 'NO');
    expectFailure('CZ1234567', 'length', 'CZ');
    expectFailure('CZ12345678901', 'length', 'CZ');
    expectFailure('IE1234567', 'length', 'IE');
    expectFailure('BE12345678', 'length', 'BE');
    expectFailure('EL1234567', 'length', 'EL');
    const r = parseVatNumber('DE1234567');
    assert.ok(
      !r.ok && r.message === 'DE VAT numbers have 9 digits after the prefix; got 7.',
      r.ok ? '' : r.message,
    );
  });

  it('characters the format does not allow', () => {
    expectFailure('AT1 142 43 102', 'length', 'AT'); // read as ATU + 9 digits
    expectFailure('ATU 1515B209', 'characters', 'AT');
    expectFailure('BE 02A2.239.951', 'characters', 'BE');
    expectFailure('BE 2428759497', 'characters', 'BE');
    expectFailure('BG 10X8735941', 'characters', 'BG');
    expectFailure('CY-102590Z3P', 'characters', 'CY');
    expectFailure('CY-12259033P', 'characters', 'CY');
    expectFailure('CY 60000000A', 'characters', 'CY');
    expectFailure('CZ 95123891', 'characters', 'CZ');
    expectFailure('DE 246X595 415', 'characters', 'DE');
    expectFailure('DE 011125440', 'characters', 'DE');
    expectFailure('IE 4550C59S', 'characters', 'IE');
    expectFailure('IE 069385V8', 'characters', 'IE');
    expectFailure('IE6433435FZ', 'characters', 'IE');
    expectFailure('IT 00687129980', 'characters', 'IT');
    expectFailure('IT 00000000000', 'characters', 'IT');
    expectFailure('LT 100001509922', 'characters', 'LT');
    expectFailure('NL 001241643801', 'characters', 'NL');
    expectFailure('NL 009122746B00', 'characters', 'NL');
    expectFailure('NL B06753742B01', 'characters', 'NL');
    expectFailure('NL 82X569759b01', 'characters', 'NL');
    expectFailure('SK A078449064', 'characters', 'SK');
    expectFailure('SK 012 274 96 19', 'characters', 'SK');
    expectFailure('SK 2010 237 945', 'characters', 'SK');
    expectFailure('SE556043606402', 'characters', 'SE');
    expectFailure('FR IO334175221', 'characters', 'FR');
    expectFailure('ES I1234567A', 'characters', 'ES');
    expectFailure('ES 123456789', 'characters', 'ES');
    expectFailure('GB 9807806B4', 'characters', 'GB');
    expectFailure('GBGD600', 'characters', 'GB');
    expectFailure('GBHA201', 'characters', 'GB');
    expectFailure('GBZZ100', 'characters', 'GB');
    expectFailure('CHE-107.787.577 ZZZ', 'characters', 'CH');
    expectFailure('NO 962209017 MOMS', 'characters', 'NO');
    expectFailure('DE 136#308783', 'characters', 'DE');
    expectFailure('DE 1363087é3', 'characters', 'DE');
    expectFailure('DE 136308783 💥', 'characters', 'DE');
  });

  it('no recognisable prefix', () => {
    expectFailure('', 'country', null);
    expectFailure('   ', 'country', null);
    expectFailure('123456789', 'country', null);
    expectFailure('D', 'country', null);
    expectFailure('D123456789', 'country', null);
    expectFailure('XX123456789', 'country', null);
    expectFailure('QQ 124567', 'country', null);
    expectFailure('ÄT12345678', 'country', null);
    expectFailure('1DE136308783', 'country', null);
  });

  it('a real country code that is not supported', () => {
    expectFailure('US123456789', 'unsupported_country', 'US');
    expectFailure('AU 51 824 753 556', 'unsupported_country', 'AU');
    expectFailure('jp1234567890123', 'unsupported_country', 'JP');
    expectFailure('LI12345', 'unsupported_country', 'LI');
    expectFailure('EU372012345', 'unsupported_country', 'EU');
    expectFailure('RU7707083893', 'unsupported_country', 'RU');
  });

  it('very long input is a length failure without parsing', () => {
    expectFailure('DE136308783'.repeat(10), 'length', null);
    expectFailure('1'.repeat(1_000_000), 'length', null);
    expectFailure(`${' '.repeat(100_000)}DE136308783${'0'.repeat(100_000)}`, 'length', null);
    // separators around a normal number are trimmed before the length is measured
    assert.ok(parseVatNumber(`${' '.repeat(100_000)}DE136308783${' '.repeat(100_000)}`).ok);
    const r = parseVatNumber(`${' '.repeat(50)}DE 136 308 783${'\u00a0'.repeat(50)}`);
    assert.ok(r.ok);
  });
});
