import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PACKAGE_ROOT } from '../../../src/config.js';
import { COUNTRY_LANGUAGES, invoiceNote } from '../../../src/modules/decide/notes.js';
import {
  type DecideInput,
  decide,
  MEMBER_STATES,
  type Mechanism,
  type RateLookup,
  type SupplyType,
} from '../../../src/modules/decide/treatment.js';
import { loadRatesDataset, ratesOn } from '../../../src/modules/rates/dataset.js';

// The real rates history, so the rates asserted here are the ones the service answers with.
const dataset = loadRatesDataset(join(PACKAGE_ROOT, 'data/rates.json'));
const byCode = new Map(dataset.countries.map((c) => [c.country_code, c]));
const rates: RateLookup = (country, date) => {
  const row = byCode.get(country.toLowerCase());
  return row ? (ratesOn(row, date)?.standard_rate ?? null) : null;
};

const DATE = '2026-03-01';

interface Scenario {
  name: string;
  seller: string;
  buyer: string;
  /** `valid`/`invalid`: a buyer VAT number with the registry's answer; `none`: the B2C form. */
  vat: 'valid' | 'invalid' | 'none';
  type: SupplyType;
  date?: string;
  ytd?: number | null;
  lastYear?: number | null;
  expect: {
    mechanism: Mechanism;
    rate: number;
    country: string;
    articles: string[];
    standardRate?: number | null;
  };
}

const RC = (country: string, standardRate: number): Scenario['expect'] => ({
  mechanism: 'reverse_charge',
  rate: 0,
  country,
  articles: ['44', '196'],
  standardRate,
});

// Standard rates on 2026-03-01, per the rates history.
const STANDARD_2026: Record<string, number> = {
  AT: 20,
  BE: 21,
  BG: 20,
  CY: 19,
  CZ: 21,
  DE: 19,
  DK: 25,
  EE: 24,
  ES: 21,
  FI: 25.5,
  FR: 20,
  GR: 24,
  HR: 25,
  HU: 27,
  IE: 23,
  IT: 22,
  LT: 21,
  LU: 17,
  LV: 21,
  MT: 18,
  NL: 21,
  PL: 23,
  PT: 23,
  RO: 21,
  SE: 25,
  SI: 22,
  SK: 23,
};

const scenarios: Scenario[] = [
  // B2B services to every other member state: reverse charge (Art. 44, 196).
  ...Object.entries(STANDARD_2026)
    .filter(([c]) => c !== 'DE')
    .map(
      ([c, r]): Scenario => ({
        name: `B2B services DE → ${c}: reverse charge`,
        seller: 'DE',
        buyer: c,
        vat: 'valid',
        type: 'services',
        expect: RC(c, r),
      }),
    ),
  {
    name: 'B2B services FR → DE: reverse charge',
    seller: 'FR',
    buyer: 'DE',
    vat: 'valid',
    type: 'services',
    expect: RC('DE', 19),
  },
  {
    name: 'B2B digital services NL → PL: reverse charge',
    seller: 'NL',
    buyer: 'PL',
    vat: 'valid',
    type: 'digital_services',
    expect: RC('PL', 23),
  },

  // Domestic B2B.
  {
    name: 'domestic B2B services DE',
    seller: 'DE',
    buyer: 'DE',
    vat: 'valid',
    type: 'services',
    expect: { mechanism: 'standard', rate: 19, country: 'DE', articles: ['44', '193'] },
  },
  {
    name: 'domestic B2B services FR',
    seller: 'FR',
    buyer: 'FR',
    vat: 'valid',
    type: 'services',
    expect: { mechanism: 'standard', rate: 20, country: 'FR', articles: ['44', '193'] },
  },
  {
    name: 'domestic B2B goods IT',
    seller: 'IT',
    buyer: 'IT',
    vat: 'valid',
    type: 'goods',
    expect: { mechanism: 'standard', rate: 22, country: 'IT', articles: ['32', '193'] },
  },
  {
    name: 'domestic B2C goods HU',
    seller: 'HU',
    buyer: 'HU',
    vat: 'none',
    type: 'goods',
    expect: { mechanism: 'standard', rate: 27, country: 'HU', articles: ['32', '193'] },
  },

  // Intra-Community supply of goods to a business: exempt with the right to deduct (Art. 138).
  {
    name: 'B2B goods DE → FR: intra-Community supply',
    seller: 'DE',
    buyer: 'FR',
    vat: 'valid',
    type: 'goods',
    expect: { mechanism: 'zero_rated', rate: 0, country: 'FR', articles: ['138'], standardRate: 20 },
  },
  {
    name: 'B2B goods PL → CZ: intra-Community supply',
    seller: 'PL',
    buyer: 'CZ',
    vat: 'valid',
    type: 'goods',
    expect: { mechanism: 'zero_rated', rate: 0, country: 'CZ', articles: ['138'] },
  },
  {
    name: 'B2B goods DE → XI: XI is a member state for goods',
    seller: 'DE',
    buyer: 'XI',
    vat: 'valid',
    type: 'goods',
    expect: { mechanism: 'zero_rated', rate: 0, country: 'XI', articles: ['138'], standardRate: 20 },
  },
  {
    name: 'B2B goods XI → IE: XI seller of goods',
    seller: 'XI',
    buyer: 'IE',
    vat: 'valid',
    type: 'goods',
    expect: { mechanism: 'zero_rated', rate: 0, country: 'IE', articles: ['138'] },
  },
  {
    name: 'domestic goods XI → XI',
    seller: 'XI',
    buyer: 'XI',
    vat: 'valid',
    type: 'goods',
    expect: { mechanism: 'standard', rate: 20, country: 'XI', articles: ['32', '193'] },
  },
  {
    name: 'goods XI → GB stay within the UK',
    seller: 'XI',
    buyer: 'GB',
    vat: 'valid',
    type: 'goods',
    expect: { mechanism: 'standard', rate: 20, country: 'GB', articles: [] },
  },

  // Distance sales of goods: the EUR 10,000 threshold, exceeded only when MORE than 10,000 (Art. 59c).
  {
    name: 'B2C goods DE → FR, ytd 9,999.99',
    seller: 'DE',
    buyer: 'FR',
    vat: 'none',
    type: 'goods',
    ytd: 9_999.99,
    lastYear: 0,
    expect: { mechanism: 'standard', rate: 19, country: 'DE', articles: ['32', '59c'] },
  },
  {
    name: 'B2C goods DE → FR, ytd 10,000 (not above)',
    seller: 'DE',
    buyer: 'FR',
    vat: 'none',
    type: 'goods',
    ytd: 10_000,
    lastYear: 10_000,
    expect: { mechanism: 'standard', rate: 19, country: 'DE', articles: ['32', '59c'] },
  },
  {
    name: 'B2C goods DE → FR, ytd 10,000.01',
    seller: 'DE',
    buyer: 'FR',
    vat: 'none',
    type: 'goods',
    ytd: 10_000.01,
    lastYear: 0,
    expect: { mechanism: 'standard', rate: 20, country: 'FR', articles: ['33(a)'] },
  },
  {
    name: 'B2C goods DE → FR, last year 9,999.99',
    seller: 'DE',
    buyer: 'FR',
    vat: 'none',
    type: 'goods',
    ytd: 0,
    lastYear: 9_999.99,
    expect: { mechanism: 'standard', rate: 19, country: 'DE', articles: ['32', '59c'] },
  },
  {
    name: 'B2C goods DE → FR, last year 10,000',
    seller: 'DE',
    buyer: 'FR',
    vat: 'none',
    type: 'goods',
    ytd: 0,
    lastYear: 10_000,
    expect: { mechanism: 'standard', rate: 19, country: 'DE', articles: ['32', '59c'] },
  },
  {
    name: 'B2C goods DE → FR, last year 10,000.01',
    seller: 'DE',
    buyer: 'FR',
    vat: 'none',
    type: 'goods',
    ytd: 0,
    lastYear: 10_000.01,
    expect: { mechanism: 'standard', rate: 20, country: 'FR', articles: ['33(a)'] },
  },
  {
    name: 'B2C goods DE → FR, sales not given: destination',
    seller: 'DE',
    buyer: 'FR',
    vat: 'none',
    type: 'goods',
    expect: { mechanism: 'standard', rate: 20, country: 'FR', articles: ['33(a)'] },
  },
  {
    name: 'B2C goods DE → FR, only ytd given (below): destination',
    seller: 'DE',
    buyer: 'FR',
    vat: 'none',
    type: 'goods',
    ytd: 5_000,
    expect: { mechanism: 'standard', rate: 20, country: 'FR', articles: ['33(a)'] },
  },
  {
    name: 'B2C goods DE → FR, only ytd given (above): destination',
    seller: 'DE',
    buyer: 'FR',
    vat: 'none',
    type: 'goods',
    ytd: 20_000,
    expect: { mechanism: 'standard', rate: 20, country: 'FR', articles: ['33(a)'] },
  },
  {
    name: 'B2C goods AT → XI above threshold',
    seller: 'AT',
    buyer: 'XI',
    vat: 'none',
    type: 'goods',
    ytd: 50_000,
    lastYear: 50_000,
    expect: { mechanism: 'standard', rate: 20, country: 'XI', articles: ['33(a)'] },
  },

  // Digital services to consumers (Art. 58, 59c).
  {
    name: 'B2C digital DE → NL, ytd 9,999.99',
    seller: 'DE',
    buyer: 'NL',
    vat: 'none',
    type: 'digital_services',
    ytd: 9_999.99,
    lastYear: 0,
    expect: { mechanism: 'standard', rate: 19, country: 'DE', articles: ['59c'] },
  },
  {
    name: 'B2C digital DE → NL, 10,000 both years',
    seller: 'DE',
    buyer: 'NL',
    vat: 'none',
    type: 'digital_services',
    ytd: 10_000,
    lastYear: 10_000,
    expect: { mechanism: 'standard', rate: 19, country: 'DE', articles: ['59c'] },
  },
  {
    name: 'B2C digital DE → NL, ytd 10,000.01',
    seller: 'DE',
    buyer: 'NL',
    vat: 'none',
    type: 'digital_services',
    ytd: 10_000.01,
    lastYear: 0,
    expect: { mechanism: 'standard', rate: 21, country: 'NL', articles: ['58'] },
  },
  {
    name: 'B2C digital DE → NL, last year 10,000.01',
    seller: 'DE',
    buyer: 'NL',
    vat: 'none',
    type: 'digital_services',
    ytd: 0,
    lastYear: 10_000.01,
    expect: { mechanism: 'standard', rate: 21, country: 'NL', articles: ['58'] },
  },
  {
    name: 'B2C digital DE → NL, sales not given: destination',
    seller: 'DE',
    buyer: 'NL',
    vat: 'none',
    type: 'digital_services',
    expect: { mechanism: 'standard', rate: 21, country: 'NL', articles: ['58'] },
  },
  {
    name: 'B2C digital DE → DE: domestic',
    seller: 'DE',
    buyer: 'DE',
    vat: 'none',
    type: 'digital_services',
    expect: { mechanism: 'standard', rate: 19, country: 'DE', articles: ['58'] },
  },
  {
    name: 'B2C digital LU → HU above threshold',
    seller: 'LU',
    buyer: 'HU',
    vat: 'none',
    type: 'digital_services',
    ytd: 12_000,
    lastYear: 0,
    expect: { mechanism: 'standard', rate: 27, country: 'HU', articles: ['58'] },
  },
  {
    name: 'B2C digital LU → HU below threshold',
    seller: 'LU',
    buyer: 'HU',
    vat: 'none',
    type: 'digital_services',
    ytd: 2_000,
    lastYear: 1_000,
    expect: { mechanism: 'standard', rate: 17, country: 'LU', articles: ['59c'] },
  },
  {
    name: 'B2C digital DE → GB: out of scope',
    seller: 'DE',
    buyer: 'GB',
    vat: 'none',
    type: 'digital_services',
    expect: { mechanism: 'out_of_scope', rate: 0, country: 'GB', articles: ['58'], standardRate: 20 },
  },
  {
    name: 'B2C digital DE → CH: out of scope',
    seller: 'DE',
    buyer: 'CH',
    vat: 'none',
    type: 'digital_services',
    expect: { mechanism: 'out_of_scope', rate: 0, country: 'CH', articles: ['58'], standardRate: 8.1 },
  },
  {
    name: 'B2C digital DE → NO: out of scope',
    seller: 'DE',
    buyer: 'NO',
    vat: 'none',
    type: 'digital_services',
    expect: { mechanism: 'out_of_scope', rate: 0, country: 'NO', articles: ['58'], standardRate: 25 },
  },
  {
    name: 'B2C digital DE → US: out of scope, no rate data',
    seller: 'DE',
    buyer: 'US',
    vat: 'none',
    type: 'digital_services',
    expect: { mechanism: 'out_of_scope', rate: 0, country: 'US', articles: ['58'], standardRate: null },
  },
  {
    name: 'B2C digital DE → XI: the UK for services',
    seller: 'DE',
    buyer: 'XI',
    vat: 'none',
    type: 'digital_services',
    expect: { mechanism: 'out_of_scope', rate: 0, country: 'GB', articles: ['58'] },
  },

  // Other B2C services: where the seller is established (Art. 45).
  {
    name: 'B2C services DE → FR',
    seller: 'DE',
    buyer: 'FR',
    vat: 'none',
    type: 'services',
    expect: { mechanism: 'standard', rate: 19, country: 'DE', articles: ['45'] },
  },
  {
    name: 'B2C services SE → US',
    seller: 'SE',
    buyer: 'US',
    vat: 'none',
    type: 'services',
    expect: { mechanism: 'standard', rate: 25, country: 'SE', articles: ['45'] },
  },
  {
    name: 'B2C services DE → XI',
    seller: 'DE',
    buyer: 'XI',
    vat: 'none',
    type: 'services',
    expect: { mechanism: 'standard', rate: 19, country: 'DE', articles: ['45'] },
  },

  // B2B services outside the EU: out of scope (Art. 44).
  {
    name: 'B2B services DE → GB',
    seller: 'DE',
    buyer: 'GB',
    vat: 'valid',
    type: 'services',
    expect: { mechanism: 'out_of_scope', rate: 0, country: 'GB', articles: ['44'] },
  },
  {
    name: 'B2B services DE → CH',
    seller: 'DE',
    buyer: 'CH',
    vat: 'valid',
    type: 'services',
    expect: { mechanism: 'out_of_scope', rate: 0, country: 'CH', articles: ['44'] },
  },
  {
    name: 'B2B digital services ES → NO',
    seller: 'ES',
    buyer: 'NO',
    vat: 'valid',
    type: 'digital_services',
    expect: { mechanism: 'out_of_scope', rate: 0, country: 'NO', articles: ['44'] },
  },
  {
    name: 'B2B services DE → XI: the UK for services',
    seller: 'DE',
    buyer: 'XI',
    vat: 'valid',
    type: 'services',
    expect: { mechanism: 'out_of_scope', rate: 0, country: 'GB', articles: ['44'] },
  },

  // Exports of goods (Art. 146).
  {
    name: 'B2C goods DE → US: export',
    seller: 'DE',
    buyer: 'US',
    vat: 'none',
    type: 'goods',
    expect: { mechanism: 'zero_rated', rate: 0, country: 'DE', articles: ['146'] },
  },
  {
    name: 'B2B goods DE → GB: export',
    seller: 'DE',
    buyer: 'GB',
    vat: 'valid',
    type: 'goods',
    expect: { mechanism: 'zero_rated', rate: 0, country: 'DE', articles: ['146'] },
  },
  {
    name: 'B2C goods FR → CH: export, threshold irrelevant',
    seller: 'FR',
    buyer: 'CH',
    vat: 'none',
    type: 'goods',
    ytd: 50_000,
    lastYear: 50_000,
    expect: { mechanism: 'zero_rated', rate: 0, country: 'FR', articles: ['146'] },
  },

  // A buyer number the registry says is invalid makes the sale B2C.
  {
    name: 'invalid buyer, services DE → FR: B2C, Art. 45',
    seller: 'DE',
    buyer: 'FR',
    vat: 'invalid',
    type: 'services',
    expect: { mechanism: 'standard', rate: 19, country: 'DE', articles: ['45'] },
  },
  {
    name: 'invalid buyer, goods DE → FR below threshold',
    seller: 'DE',
    buyer: 'FR',
    vat: 'invalid',
    type: 'goods',
    ytd: 100,
    lastYear: 100,
    expect: { mechanism: 'standard', rate: 19, country: 'DE', articles: ['32', '59c'] },
  },
  {
    name: 'invalid buyer, digital DE → FR, sales not given',
    seller: 'DE',
    buyer: 'FR',
    vat: 'invalid',
    type: 'digital_services',
    expect: { mechanism: 'standard', rate: 20, country: 'FR', articles: ['58'] },
  },
  {
    name: 'invalid buyer, services DE → GB: B2C, Art. 45',
    seller: 'DE',
    buyer: 'GB',
    vat: 'invalid',
    type: 'services',
    expect: { mechanism: 'standard', rate: 19, country: 'DE', articles: ['45'] },
  },

  // Rate changes: the rate in force on the supply date.
  {
    name: 'FI domestic 2024-08-31: 24%',
    seller: 'FI',
    buyer: 'FI',
    vat: 'none',
    type: 'goods',
    date: '2024-08-31',
    expect: { mechanism: 'standard', rate: 24, country: 'FI', articles: ['32', '193'] },
  },
  {
    name: 'FI domestic 2024-09-01: 25.5%',
    seller: 'FI',
    buyer: 'FI',
    vat: 'none',
    type: 'goods',
    date: '2024-09-01',
    expect: { mechanism: 'standard', rate: 25.5, country: 'FI', articles: ['32', '193'] },
  },
  {
    name: 'B2C services FI → SE 2024-08-31: 24%',
    seller: 'FI',
    buyer: 'SE',
    vat: 'none',
    type: 'services',
    date: '2024-08-31',
    expect: { mechanism: 'standard', rate: 24, country: 'FI', articles: ['45'] },
  },
  {
    name: 'B2C services FI → SE 2024-09-01: 25.5%',
    seller: 'FI',
    buyer: 'SE',
    vat: 'none',
    type: 'services',
    date: '2024-09-01',
    expect: { mechanism: 'standard', rate: 25.5, country: 'FI', articles: ['45'] },
  },
  {
    name: 'EE domestic 2025-06-30: 22%',
    seller: 'EE',
    buyer: 'EE',
    vat: 'valid',
    type: 'services',
    date: '2025-06-30',
    expect: { mechanism: 'standard', rate: 22, country: 'EE', articles: ['44', '193'] },
  },
  {
    name: 'EE domestic 2025-07-01: 24%',
    seller: 'EE',
    buyer: 'EE',
    vat: 'valid',
    type: 'services',
    date: '2025-07-01',
    expect: { mechanism: 'standard', rate: 24, country: 'EE', articles: ['44', '193'] },
  },
  {
    name: 'B2C digital DE → EE above threshold 2025-06-30: 22%',
    seller: 'DE',
    buyer: 'EE',
    vat: 'none',
    type: 'digital_services',
    date: '2025-06-30',
    ytd: 20_000,
    lastYear: 0,
    expect: { mechanism: 'standard', rate: 22, country: 'EE', articles: ['58'] },
  },
  {
    name: 'B2C digital DE → EE above threshold 2025-07-01: 24%',
    seller: 'DE',
    buyer: 'EE',
    vat: 'none',
    type: 'digital_services',
    date: '2025-07-01',
    ytd: 20_000,
    lastYear: 0,
    expect: { mechanism: 'standard', rate: 24, country: 'EE', articles: ['58'] },
  },
  {
    name: 'RO domestic 2025-07-31: 19%',
    seller: 'RO',
    buyer: 'RO',
    vat: 'none',
    type: 'goods',
    date: '2025-07-31',
    expect: { mechanism: 'standard', rate: 19, country: 'RO', articles: ['32', '193'] },
  },
  {
    name: 'RO domestic 2025-08-01: 21%',
    seller: 'RO',
    buyer: 'RO',
    vat: 'none',
    type: 'goods',
    date: '2025-08-01',
    expect: { mechanism: 'standard', rate: 21, country: 'RO', articles: ['32', '193'] },
  },
  {
    name: 'B2C goods DE → RO above threshold 2025-07-31: 19%',
    seller: 'DE',
    buyer: 'RO',
    vat: 'none',
    type: 'goods',
    date: '2025-07-31',
    ytd: 0,
    lastYear: 30_000,
    expect: { mechanism: 'standard', rate: 19, country: 'RO', articles: ['33(a)'] },
  },
  {
    name: 'B2C goods DE → RO above threshold 2025-08-01: 21%',
    seller: 'DE',
    buyer: 'RO',
    vat: 'none',
    type: 'goods',
    date: '2025-08-01',
    ytd: 0,
    lastYear: 30_000,
    expect: { mechanism: 'standard', rate: 21, country: 'RO', articles: ['33(a)'] },
  },
  {
    name: 'SK domestic 2024-12-31: 20%',
    seller: 'SK',
    buyer: 'SK',
    vat: 'valid',
    type: 'goods',
    date: '2024-12-31',
    expect: { mechanism: 'standard', rate: 20, country: 'SK', articles: ['32', '193'] },
  },
  {
    name: 'SK domestic 2025-01-01: 23%',
    seller: 'SK',
    buyer: 'SK',
    vat: 'valid',
    type: 'goods',
    date: '2025-01-01',
    expect: { mechanism: 'standard', rate: 23, country: 'SK', articles: ['32', '193'] },
  },
  {
    name: 'reverse charge DE → SK 2024-12-31: buyer accounts at 20%',
    seller: 'DE',
    buyer: 'SK',
    vat: 'valid',
    type: 'services',
    date: '2024-12-31',
    expect: RC('SK', 20),
  },
  {
    name: 'reverse charge DE → SK 2025-01-01: buyer accounts at 23%',
    seller: 'DE',
    buyer: 'SK',
    vat: 'valid',
    type: 'services',
    date: '2025-01-01',
    expect: RC('SK', 23),
  },
  {
    name: 'DE domestic 2020-06-30: 19%',
    seller: 'DE',
    buyer: 'DE',
    vat: 'none',
    type: 'services',
    date: '2020-06-30',
    expect: { mechanism: 'standard', rate: 19, country: 'DE', articles: ['45'] },
  },
  {
    name: 'DE domestic 2020-07-01: 16% (temporary cut)',
    seller: 'DE',
    buyer: 'DE',
    vat: 'none',
    type: 'services',
    date: '2020-07-01',
    expect: { mechanism: 'standard', rate: 16, country: 'DE', articles: ['45'] },
  },
  {
    name: 'DE domestic 2021-01-01: back to 19%',
    seller: 'DE',
    buyer: 'DE',
    vat: 'none',
    type: 'services',
    date: '2021-01-01',
    expect: { mechanism: 'standard', rate: 19, country: 'DE', articles: ['45'] },
  },
  {
    name: 'IE domestic 2020-09-01: 21% (temporary cut)',
    seller: 'IE',
    buyer: 'IE',
    vat: 'none',
    type: 'goods',
    date: '2020-09-01',
    expect: { mechanism: 'standard', rate: 21, country: 'IE', articles: ['32', '193'] },
  },
];

function input(s: Scenario): DecideInput {
  return {
    seller: { country: s.seller },
    buyer: { country: s.buyer, vat: s.vat === 'none' ? null : { valid: s.vat === 'valid' } },
    supplyType: s.type,
    supplyDate: s.date ?? DATE,
    salesYtd: s.ytd ?? null,
    salesLastYear: s.lastYear ?? null,
  };
}

describe('decide rules (Council Directive 2006/112/EC)', () => {
  it(`has at least 60 scenarios, with every member state as buyer`, () => {
    assert.ok(scenarios.length >= 60, `only ${scenarios.length} scenarios`);
    const buyers = new Set(scenarios.map((s) => s.buyer));
    for (const ms of MEMBER_STATES) assert.ok(buyers.has(ms), `no scenario with buyer ${ms}`);
  });

  for (const s of scenarios) {
    it(s.name, () => {
      const result = decide(input(s), rates);
      assert.ok(result.kind === 'ok', JSON.stringify(result));
      const d = result.decision;
      assert.equal(d.mechanism, s.expect.mechanism, 'mechanism');
      assert.equal(d.rate, s.expect.rate, 'rate');
      assert.equal(d.countryOfTaxation, s.expect.country, 'country of taxation');
      assert.deepEqual(d.articles, s.expect.articles, 'articles');
      assert.equal(d.chargeVat, s.expect.mechanism === 'standard', 'charge_vat');
      for (const article of d.articles) assert.ok(d.legalBasis.includes(article), d.legalBasis);
      if (s.expect.standardRate !== undefined)
        assert.equal(d.standardRate, s.expect.standardRate, 'standard rate');
      if (d.chargeVat) assert.equal(d.standardRate, d.rate);
      assert.equal(d.customerType, s.vat === 'valid' ? 'business' : 'consumer');
      if (s.vat === 'invalid') assert.match(d.explanation, /buyer's VAT number as not valid/);
      else assert.doesNotMatch(d.explanation, /not valid/);
    });
  }

  it('reports the threshold only for cross-border B2C distance sales and digital services', () => {
    const base = scenarios.find((s) => s.name === 'B2C goods DE → FR, ytd 10,000 (not above)') as Scenario;
    const below = decide(input(base), rates);
    assert.ok(below.kind === 'ok');
    assert.deepEqual(below.decision.threshold, {
      threshold: 10_000,
      salesYtd: 10_000,
      salesLastYear: 10_000,
      exceeded: false,
    });
    const unknown = decide({ ...input(base), salesYtd: null, salesLastYear: null }, rates);
    assert.ok(unknown.kind === 'ok');
    assert.equal(unknown.decision.threshold?.exceeded, null);
    assert.match(unknown.decision.explanation, /could not be applied/);
    const b2b = decide({ ...input(base), buyer: { country: 'FR', vat: { valid: true } } }, rates);
    assert.ok(b2b.kind === 'ok');
    assert.equal(b2b.decision.threshold, null);
  });

  it('names the invoice mention each mechanism needs', () => {
    const note = (s: Partial<Scenario>) => {
      const r = decide(input({ ...scenarios[0], ...s } as Scenario), rates);
      assert.ok(r.kind === 'ok');
      return [r.decision.note, r.decision.noteArticle];
    };
    assert.deepEqual(note({ buyer: 'FR', vat: 'valid', type: 'services' }), ['reverse_charge', null]);
    assert.deepEqual(note({ buyer: 'FR', vat: 'valid', type: 'goods' }), ['intra_community_supply', null]);
    assert.deepEqual(note({ buyer: 'US', vat: 'none', type: 'goods' }), ['export', null]);
    assert.deepEqual(note({ buyer: 'CH', vat: 'valid', type: 'services' }), ['out_of_scope', '44']);
    assert.deepEqual(note({ buyer: 'CH', vat: 'none', type: 'digital_services' }), ['out_of_scope', '58']);
    assert.deepEqual(note({ buyer: 'FR', vat: 'none', type: 'services' }), [null, null]);
  });

  it('says the buyer country may tax digital services sold outside the EU', () => {
    const r = decide(
      input({ ...scenarios[0], buyer: 'NO', vat: 'none', type: 'digital_services' } as Scenario),
      rates,
    );
    assert.ok(r.kind === 'ok');
    assert.match(r.decision.explanation, /may tax these services/);
  });

  it('refuses sellers outside the EU, and XI sellers of services', () => {
    for (const [seller, type] of [
      ['GB', 'services'],
      ['CH', 'goods'],
      ['US', 'digital_services'],
      ['XI', 'services'],
      ['XI', 'digital_services'],
    ] as const) {
      const r = decide(input({ ...scenarios[0], seller, type } as Scenario), rates);
      assert.equal(r.kind, 'undecided', `${seller} ${type}`);
      assert.equal(r.kind === 'undecided' && r.reason, 'seller_country_unsupported');
    }
  });

  it('refuses a supply date before the rates history when VAT is charged', () => {
    const r = decide(
      input({ ...scenarios[0], buyer: 'DE', vat: 'none', date: '2019-12-31' } as Scenario),
      rates,
    );
    assert.equal(r.kind, 'undecided');
    assert.equal(r.kind === 'undecided' && r.reason, 'no_rates');
  });
});

describe('invoice notes', () => {
  it('gives the reverse-charge mention of Art. 226(11a) in the buyer country language(s)', () => {
    assert.equal(invoiceNote('reverse_charge', 'FR').translations[0]?.text, 'Autoliquidation');
    assert.equal(
      invoiceNote('reverse_charge', 'DE').translations[0]?.text,
      'Steuerschuldnerschaft des Leistungsempfängers',
    );
    assert.equal(invoiceNote('reverse_charge', 'ES').translations[0]?.text, 'Inversión del sujeto pasivo');
    assert.equal(invoiceNote('reverse_charge', 'IT').translations[0]?.text, 'Inversione contabile');
    assert.equal(invoiceNote('reverse_charge', 'NL').translations[0]?.text, 'Btw verlegd');
    assert.equal(invoiceNote('reverse_charge', 'PL').translations[0]?.text, 'Odwrotne obciążenie');
    assert.deepEqual(
      invoiceNote('reverse_charge', 'BE').translations.map((t) => t.language),
      ['nl', 'fr', 'de'],
    );
    assert.deepEqual(
      invoiceNote('reverse_charge', 'FI').translations.map((t) => t.language),
      ['fi', 'sv'],
    );
    assert.match(invoiceNote('reverse_charge', 'IE').text, /^Reverse charge/);
    assert.deepEqual(invoiceNote('reverse_charge', 'IE').translations, []);
  });

  it('has the reverse-charge and intra-Community mentions for every member state', () => {
    for (const ms of MEMBER_STATES) {
      const languages = (COUNTRY_LANGUAGES[ms] ?? []).filter((l) => l !== 'en');
      for (const kind of ['reverse_charge', 'intra_community_supply'] as const) {
        const note = invoiceNote(kind, ms);
        assert.equal(note.translations.length, languages.length, `${kind} ${ms}`);
      }
    }
    assert.match(
      invoiceNote('intra_community_supply', 'AT').translations[0]?.text ?? '',
      /innergemeinschaftliche/,
    );
  });

  it('gives the export and out-of-scope notes with their article, in Swiss languages', () => {
    const exp = invoiceNote('export', 'CH');
    assert.match(exp.text, /Article 146/);
    assert.deepEqual(
      exp.translations.map((t) => t.language),
      ['de', 'fr', 'it'],
    );
    const oos = invoiceNote('out_of_scope', 'NO', '58');
    assert.match(oos.text, /Article 58/);
    assert.match(oos.translations[0]?.text ?? '', /artikkel 58/);
    assert.deepEqual(invoiceNote('out_of_scope', 'US', '44').translations, []);
  });
});
