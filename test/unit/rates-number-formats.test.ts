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
      ua: { valid: ['UA123456789012'], invalid: 'UA12345678901' },
      au: { valid: ['AU51824753556'], invalid: 'AU5182475355' },
      nz: { valid: ['NZ12345678', 'NZ123456789'], invalid: 'NZ1234567' },
      sg: { valid: ['SGM90312345A', 'SG200312345A'], invalid: 'SG1234' },
      jp: { valid: ['JPT1234567890123'], invalid: 'JP1234567890123' },
      kr: { valid: ['KR1234567890'], invalid: 'KR123456789' },
      ca: { valid: ['CA123456789', 'CA123456789RT0001'], invalid: 'CA123456789RT1' },
      za: { valid: ['ZA4123456789'], invalid: 'ZA5123456789' },
      in: { valid: ['IN27AAPFU0939F1ZV', 'IN9917USA29002OSF'], invalid: 'IN27AAPFU0939F1V' },
      sa: { valid: ['SA300000000000003'], invalid: 'SA300000000000004' },
      ae: { valid: ['AE100000000000003'], invalid: 'AE10000000000000' },
      bh: { valid: ['BH200000000000001'], invalid: 'BH20000000000001' },
      om: { valid: ['OM1100000000'], invalid: 'OM110000000' },
      il: { valid: ['IL123456789'], invalid: 'IL12345678' },
      ke: { valid: ['KEP051234567A'], invalid: 'KEX051234567A' },
      eg: { valid: ['EG123456789'], invalid: 'EG1234567890' },
      mx: { valid: ['MXABC010101AB1', 'MXABCD010101AB1'], invalid: 'MXAB010101AB1' },
      cl: { valid: ['CL123456789', 'CL12345678K'], invalid: 'CL12345678X' },
      co: { valid: ['CO900123456', 'CO9001234567'], invalid: 'CO90012345' },
      my: { valid: ['MYW10180832000001'], invalid: 'MY10180832000001' },
      th: { valid: ['TH0105536000000'], invalid: 'TH010553600000' },
      tw: { valid: ['TW12345678'], invalid: 'TW1234567' },
      id: { valid: ['ID012345678901234', 'ID0123456789012345'], invalid: 'ID01234567890123' },
      ph: { valid: ['PH123456789', 'PH123456789000'], invalid: 'PH12345678' },
      vn: { valid: ['VN0100109106', 'VN0100109106001'], invalid: 'VN010010910' },
      ba: { valid: ['BA401234567890'], invalid: 'BA40123456789' },
      ge: { valid: ['GE123456789', 'GE12345678901'], invalid: 'GE1234567890' },
      am: { valid: ['AM12345678'], invalid: 'AM1234567' },
      cn: { valid: ['CN91350100M000100Y43'], invalid: 'CN91350100M000100Y4' },
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
