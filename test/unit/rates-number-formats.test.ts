import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadRatesDataset, type RatesDataset } from '../../src/modules/rates/dataset.js';

const DATA_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'data', 'rates.json');
const dataset: RatesDataset = loadRatesDataset(DATA_PATH);

describe('data/rates.json', () => {
  describe('vat_number_regex', () => {
    const examples: Record<string, { valid: string[]; invalid: string }> = {
      at: { valid: ['ATU12345678', 'ATU99999999'], invalid: 'AT12345678' },
      be: { valid: ['BE0123456789', 'BE1234567890'], invalid: 'BE2234567890' },
      bg: { valid: ['BG123456789', 'BG1234567890'], invalid: 'BG12345678' },
      hr: { valid: ['HR12345678901', 'HR00000000001'], invalid: 'HR1234567890' },
      cy: { valid: ['CY12345678X', 'CY10259033P'], invalid: 'CY123456789' },
      cz: { valid: ['CZ12345678', 'CZ123456789', 'CZ1234567890'], invalid: 'CZ1234567' },
      dk: { valid: ['DK12345678', 'DK88146328'], invalid: 'DK1234567' },
      ee: { valid: ['EE100931558', 'EE123456789'], invalid: 'EE12345678' },
      fi: { valid: ['FI12345678', 'FI20774740'], invalid: 'FI1234567' },
      fr: { valid: ['FR40303265045', 'FRK7399859412', 'FRAB123456789'], invalid: 'FRIO123456789' },
      de: { valid: ['DE123456789', 'DE136695976'], invalid: 'DE12345678' },
      gr: { valid: ['EL123456789', 'EL094259216'], invalid: 'GR123456789' },
      hu: { valid: ['HU12345678', 'HU21376414'], invalid: 'HU123456789' },
      ie: { valid: ['IE6433435F', 'IE1234567WA', 'IE8Z49289F', 'IE7+12345A'], invalid: 'IE123456' },
      it: { valid: ['IT12345678901', 'IT00743110157'], invalid: 'IT1234567890' },
      lv: { valid: ['LV12345678901', 'LV40003521600'], invalid: 'LV1234567890' },
      lt: { valid: ['LT123456789', 'LT123456789012'], invalid: 'LT1234567890' },
      lu: { valid: ['LU12345678', 'LU15027442'], invalid: 'LU1234567' },
      mt: { valid: ['MT12345678', 'MT11679112'], invalid: 'MT123456789' },
      nl: { valid: ['NL123456789B01', 'NL004495445B01', 'NL002455799B11'], invalid: 'NL123456789' },
      pl: { valid: ['PL1234567890', 'PL5260250995'], invalid: 'PL123456789' },
      pt: { valid: ['PT123456789', 'PT501964843'], invalid: 'PT12345678' },
      ro: { valid: ['RO18547290', 'RO12', 'RO1234567890'], invalid: 'RO0123456' },
      sk: { valid: ['SK1234567890', 'SK2022749619'], invalid: 'SK123456789' },
      si: { valid: ['SI12345678', 'SI50223054'], invalid: 'SI1234567' },
      es: { valid: ['ESA12345674', 'ESX1234567L', 'ES12345678Z', 'ESB1234567C'], invalid: 'ES123456789' },
      se: { valid: ['SE123456789001', 'SE556188840401'], invalid: 'SE123456789012' },
      xi: { valid: ['XI123456789', 'XI123456789012', 'XIGD123', 'XIHA567'], invalid: 'XIGD567' },
      gb: { valid: ['GB123456789', 'GB123456789012', 'GBGD001', 'GBHA599'], invalid: 'GBHA123' },
      ch: {
        valid: ['CHE123456789', 'CHE123456789MWST', 'CHE123456789TVA', 'CHE123456789IVA'],
        invalid: 'CH123456789',
      },
      li: { valid: ['LI12345', 'LI54321'], invalid: 'LI123456' },
      no: { valid: ['NO123456789', 'NO123456789MVA'], invalid: 'NO12345678' },
      is: { valid: ['IS12345', 'IS123456'], invalid: 'IS1234' },
      rs: { valid: ['RS123456789', 'RS100001234'], invalid: 'RS12345678' },
      tr: { valid: ['TR1234567890', 'TR0123456789'], invalid: 'TR123456789' },
    };

    it('has examples for every country in the dataset', () => {
      for (const c of dataset.countries)
        assert.ok(examples[c.country_code], `no examples for ${c.country_code}`);
    });

    for (const [code, { valid, invalid }] of Object.entries(examples)) {
      it(`${code} accepts valid numbers and rejects a wrong one`, () => {
        const row = dataset.countries.find((c) => c.country_code === code);
        if (!row) return;
        const re = new RegExp(row.vat_number_regex);
        for (const v of valid) assert.ok(re.test(v), `${code} should accept ${v}`);
        assert.ok(!re.test(invalid), `${code} should reject ${invalid}`);
      });
    }
  });
});
