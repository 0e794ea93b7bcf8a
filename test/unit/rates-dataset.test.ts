import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { CountryRates, RatesDataset } from '../../src/modules/rates/dataset.js';
import { loadRatesDataset, ratesOn } from '../../src/modules/rates/dataset.js';

const DATA_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'data', 'rates.json');
const dataset: RatesDataset = loadRatesDataset(DATA_PATH);

function country(code: string): CountryRates {
  const row = dataset.countries.find((c) => c.country_code === code);
  assert.ok(row, `country ${code} missing`);
  return row;
}

function standardOn(code: string, date: string): number | undefined {
  return ratesOn(country(code), date)?.standard_rate;
}

function reducedOn(code: string, date: string): number[] | undefined {
  return ratesOn(country(code), date)?.reduced_rates;
}

const EU_27 = [
  'at',
  'be',
  'bg',
  'hr',
  'cy',
  'cz',
  'dk',
  'ee',
  'fi',
  'fr',
  'de',
  'gr',
  'hu',
  'ie',
  'it',
  'lv',
  'lt',
  'lu',
  'mt',
  'nl',
  'pl',
  'pt',
  'ro',
  'sk',
  'si',
  'es',
  'se',
];

describe('data/rates.json', () => {
  it('loads and validates', () => {
    assert.match(dataset.data_version, /^\d{4}-\d{2}-\d{2}$/);
    assert.ok(dataset.countries.length >= 32);
  });

  it('contains the 27 EU member states, xi, gb, ch, li and no', () => {
    for (const code of [...EU_27, 'xi', 'gb', 'ch', 'li', 'no']) country(code);
    for (const code of [...EU_27, 'xi']) assert.equal(country(code).is_eu_member, true, code);
    for (const code of ['gb', 'ch', 'li', 'no']) assert.equal(country(code).is_eu_member, false, code);
  });

  it('gives every row at least two sources and an updated_at date', () => {
    for (const c of dataset.countries) {
      assert.ok(c.sources.length >= 2, `${c.country_code} has ${c.sources.length} source(s)`);
      assert.match(c.updated_at, /^\d{4}-\d{2}-\d{2}$/, c.country_code);
    }
  });

  it('has history back to 2020-01-01 for the EU states, gb, ch and no', () => {
    for (const code of [...EU_27, 'xi', 'gb', 'ch', 'no']) {
      const first = country(code).periods[0];
      assert.ok(first && first.from <= '2020-01-01', code);
    }
  });

  it('uses EUR distance selling for EU members only', () => {
    for (const c of dataset.countries) {
      const t = c.registration_threshold;
      if (!t) continue;
      assert.equal(t.distance_selling, c.is_eu_member ? 10000 : null, c.country_code);
    }
  });

  it('has the expected current thresholds', () => {
    assert.deepEqual(country('de').registration_threshold, {
      domestic: 25000,
      distance_selling: 10000,
      currency: 'EUR',
      non_resident: { amount: 0, currency: 'EUR' },
    });
    assert.equal(country('at').registration_threshold?.domestic, 55000);
    assert.equal(country('be').registration_threshold?.domestic, 25000);
    assert.deepEqual(country('gb').registration_threshold, {
      domestic: 90000,
      distance_selling: null,
      currency: 'GBP',
      non_resident: { amount: 0, currency: 'GBP' },
    });
    assert.deepEqual(country('xi').registration_threshold, {
      domestic: 90000,
      distance_selling: 10000,
      currency: 'GBP',
      non_resident: { amount: 0, currency: 'GBP' },
    });
    assert.deepEqual(country('no').registration_threshold, {
      domestic: 50000,
      distance_selling: null,
      currency: 'NOK',
      non_resident: { amount: 50000, currency: 'NOK' },
    });
    assert.deepEqual(country('ch').registration_threshold, {
      domestic: 100000,
      distance_selling: null,
      currency: 'CHF',
      non_resident: { amount: 100000, currency: 'CHF' },
    });
    assert.equal(country('es').registration_threshold?.domestic, null);
    assert.equal(country('bg').currency, 'EUR');
  });

  describe('current figures and change dates', () => {
    it('de 19/[7], with the 2020 COVID cut', () => {
      assert.equal(standardOn('de', '2026-11-22'), 19);
      assert.deepEqual(reducedOn('de', '2026-11-22'), [7]);
      assert.equal(standardOn('de', '2020-06-30'), 19);
      assert.equal(standardOn('de', '2020-07-01'), 16);
      assert.deepEqual(reducedOn('de', '2020-12-31'), [5]);
      assert.equal(standardOn('de', '2021-01-01'), 19);
    });

    it('fi 24 -> 25.5 on 2024-09-01 and 14 -> 13.5 on 2026-01-01', () => {
      assert.equal(standardOn('fi', '2024-08-31'), 24);
      assert.equal(standardOn('fi', '2024-09-01'), 25.5);
      assert.deepEqual(reducedOn('fi', '2025-12-31'), [10, 14]);
      assert.deepEqual(reducedOn('fi', '2026-01-01'), [10, 13.5]);
    });

    it('sk 20 -> 23 on 2025-01-01 with 5 and 19', () => {
      assert.equal(standardOn('sk', '2024-12-31'), 20);
      assert.equal(standardOn('sk', '2025-01-01'), 23);
      assert.deepEqual(reducedOn('sk', '2026-11-22'), [5, 19]);
    });

    it('ee 22 -> 24 on 2025-07-01, accommodation 13 from 2025-01-01', () => {
      assert.equal(standardOn('ee', '2023-12-31'), 20);
      assert.equal(standardOn('ee', '2024-01-01'), 22);
      assert.equal(standardOn('ee', '2025-06-30'), 22);
      assert.equal(standardOn('ee', '2025-07-01'), 24);
      assert.deepEqual(reducedOn('ee', '2024-12-31'), [5, 9]);
      assert.deepEqual(reducedOn('ee', '2025-01-01'), [9, 13]);
    });

    it('ro 19 -> 21 on 2025-08-01 with 5/9 merged into 11', () => {
      assert.equal(standardOn('ro', '2025-07-31'), 19);
      assert.deepEqual(reducedOn('ro', '2025-07-31'), [5, 9]);
      assert.equal(standardOn('ro', '2025-08-01'), 21);
      assert.deepEqual(reducedOn('ro', '2025-08-01'), [11]);
    });

    it('cz reduced rates merged into 12 on 2024-01-01', () => {
      assert.deepEqual(reducedOn('cz', '2023-12-31'), [10, 15]);
      assert.deepEqual(reducedOn('cz', '2024-01-01'), [12]);
      assert.equal(standardOn('cz', '2026-11-22'), 21);
    });

    it('ch 7.7 -> 8.1 on 2024-01-01 with 2.6 and 3.8', () => {
      assert.equal(standardOn('ch', '2023-12-31'), 7.7);
      assert.equal(standardOn('ch', '2024-01-01'), 8.1);
      assert.deepEqual(reducedOn('ch', '2026-11-22'), [2.6, 3.8]);
      assert.equal(standardOn('li', '2026-11-22'), 8.1);
    });

    it('lt 9% replaced by 12% on 2026-01-01', () => {
      assert.deepEqual(reducedOn('lt', '2025-12-31'), [5, 9]);
      assert.deepEqual(reducedOn('lt', '2026-01-01'), [5, 12]);
    });

    it('ie 21% from 2020-09-01 to 2021-02-28, 4.8 super-reduced, 13.5 parking', () => {
      assert.equal(standardOn('ie', '2020-08-31'), 23);
      assert.equal(standardOn('ie', '2020-09-01'), 21);
      assert.equal(standardOn('ie', '2021-02-28'), 21);
      assert.equal(standardOn('ie', '2021-03-01'), 23);
      const now = ratesOn(country('ie'), '2026-11-22');
      assert.equal(now?.super_reduced_rate, 4.8);
      assert.equal(now?.parking_rate, 13.5);
    });

    it('lu 16% during 2023 only', () => {
      assert.equal(standardOn('lu', '2022-12-31'), 17);
      assert.equal(standardOn('lu', '2023-01-01'), 16);
      assert.equal(standardOn('lu', '2023-12-31'), 16);
      assert.equal(standardOn('lu', '2024-01-01'), 17);
      assert.equal(ratesOn(country('lu'), '2026-11-22')?.parking_rate, 14);
    });

    it('es temporary 5% food rate ended with 2024', () => {
      assert.deepEqual(reducedOn('es', '2024-09-30'), [5, 10]);
      assert.deepEqual(reducedOn('es', '2025-01-01'), [10]);
      assert.equal(ratesOn(country('es'), '2026-11-22')?.super_reduced_rate, 4);
    });

    it('at 4.9% staple-food rate from 2026-07-01', () => {
      assert.equal(ratesOn(country('at'), '2026-06-30')?.super_reduced_rate, null);
      assert.equal(ratesOn(country('at'), '2026-07-01')?.super_reduced_rate, 4.9);
      assert.equal(ratesOn(country('at'), '2026-11-22')?.parking_rate, 13);
    });

    it('other headline rates', () => {
      const expected: Record<string, number> = {
        hu: 27,
        fr: 20,
        it: 22,
        es: 21,
        nl: 21,
        be: 21,
        pl: 23,
        pt: 23,
        se: 25,
        dk: 25,
        gr: 24,
        hr: 25,
        cy: 19,
        mt: 18,
        si: 22,
        lv: 21,
        bg: 20,
        gb: 20,
        xi: 20,
        no: 25,
        at: 20,
      };
      for (const [code, std] of Object.entries(expected))
        assert.equal(standardOn(code, '2026-11-22'), std, code);
      assert.equal(ratesOn(country('fr'), '2026-11-22')?.super_reduced_rate, 2.1);
    });

    it('gb 12.5% hospitality rate in 2021-10-01..2022-03-31', () => {
      assert.deepEqual(reducedOn('gb', '2021-09-30'), [5]);
      assert.deepEqual(reducedOn('gb', '2021-10-01'), [5, 12.5]);
      assert.deepEqual(reducedOn('gb', '2022-04-01'), [5]);
    });

    it('returns null before the first period', () => {
      assert.equal(ratesOn(country('de'), '2019-12-31'), null);
    });

    it('rejects a malformed date', () => {
      assert.throws(() => ratesOn(country('de'), '2025-02-30'), /not a valid date/);
    });
  });
});
