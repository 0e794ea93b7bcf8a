import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  type CountryRates,
  loadRatesDataset,
  parseRatesDataset,
  type RatesDataset,
  ratesOn,
  regionsOn,
} from '../../src/modules/rates/dataset.js';
import { dayInZone, timeZoneOf } from '../../src/modules/rates/time-zones.js';

const DATA_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'data', 'rates.json');
const dataset: RatesDataset = loadRatesDataset(DATA_PATH);

function country(code: string): CountryRates {
  const row = dataset.countries.find((c) => c.country_code === code);
  assert.ok(row, `country ${code} missing`);
  return row;
}

const on = (code: string, date: string) => ratesOn(country(code), date);

const BEYOND_EUROPE = ['ua', 'au', 'nz', 'sg', 'jp', 'kr', 'ca', 'za', 'in', 'sa', 'ae'];

describe('data/rates.json coverage', () => {
  it('covers at least 60 countries, Ukraine and the countries that tax foreign sellers of digital services', () => {
    assert.ok(dataset.countries.length >= 60, `${dataset.countries.length} countries`);
    for (const code of [...BEYOND_EUROPE, 'ch', 'no', 'is', 'li']) {
      assert.equal(country(code).is_eu_member, false, code);
    }
  });

  it('gives every country its time zone, sources and the day each was checked', () => {
    for (const c of dataset.countries) {
      const zone = timeZoneOf(c.country_code);
      assert.notEqual(zone, 'UTC', `${c.country_code} has no time zone`);
      // A zone the runtime does not know would throw here.
      assert.match(dayInZone(zone, Date.parse('2026-11-28T12:00:00Z')).day, /^2026-11-2[89]$/);
      assert.ok(c.sources.length >= 2, `${c.country_code} has ${c.sources.length} source(s)`);
      for (const s of c.sources) {
        assert.match(s.url, /^https?:\/\//, c.country_code);
        assert.match(s.checked, /^\d{4}-\d{2}-\d{2}$/, c.country_code);
      }
      assert.ok(c.periods.at(-1)?.to === null, c.country_code);
    }
  });

  it('marks the rows added beyond Europe as checked on 2026-11-28, outside the EU', () => {
    for (const code of BEYOND_EUROPE) {
      const c = country(code);
      assert.equal(c.updated_at, '2026-11-28', code);
      assert.ok(
        c.sources.every((s) => s.checked === '2026-11-28'),
        code,
      );
      assert.equal(c.registration_threshold?.distance_selling ?? null, null, code);
    }
  });

  it('has the rates in force for the countries beyond Europe', () => {
    const now = '2026-11-28';
    const expected: Record<string, [number, number[]]> = {
      ua: [20, [7, 14]],
      au: [10, []],
      nz: [15, []],
      sg: [9, []],
      jp: [10, [8]],
      kr: [10, []],
      ca: [5, []],
      za: [15, []],
      in: [18, [5]],
      sa: [15, []],
      ae: [5, []],
      bh: [10, []],
      om: [5, []],
      il: [18, []],
      ke: [16, []],
      tr: [20, [1, 10]],
      th: [7, []],
      id: [12, []],
      vn: [10, [5, 8]],
      my: [8, [6]],
      ch: [8.1, [2.6, 3.8]],
    };
    for (const [code, [standard, reduced]] of Object.entries(expected)) {
      assert.equal(on(code, now)?.standard_rate, standard, code);
      assert.deepEqual(on(code, now)?.reduced_rates, reduced, code);
    }
  });

  it('dates the changes: sg 7/8/9, sa 5 -> 15, il 17 -> 18, bh 5 -> 10, in without 12% from 2025-09-22, vn back to 10/5 in 2027', () => {
    assert.equal(on('sg', '2022-12-31')?.standard_rate, 7);
    assert.equal(on('sg', '2023-01-01')?.standard_rate, 8);
    assert.equal(on('sg', '2024-01-01')?.standard_rate, 9);
    assert.equal(on('sa', '2020-06-30')?.standard_rate, 5);
    assert.equal(on('sa', '2020-07-01')?.standard_rate, 15);
    assert.equal(on('il', '2024-12-31')?.standard_rate, 17);
    assert.equal(on('il', '2025-01-01')?.standard_rate, 18);
    assert.equal(on('bh', '2021-12-31')?.standard_rate, 5);
    assert.equal(on('bh', '2022-01-01')?.standard_rate, 10);
    assert.deepEqual(on('in', '2025-09-21')?.reduced_rates, [5, 12]);
    assert.deepEqual(on('in', '2025-09-22')?.reduced_rates, [5]);
    assert.deepEqual(on('vn', '2026-12-31')?.reduced_rates, [5, 8]);
    assert.deepEqual(on('vn', '2027-01-01')?.reduced_rates, [5]);
    assert.equal(on('id', '2024-12-31')?.standard_rate, 11);
    assert.equal(on('id', '2025-01-01')?.standard_rate, 12);
    assert.deepEqual(on('ua', '2021-02-28')?.reduced_rates, [7]);
    assert.deepEqual(on('ua', '2021-03-01')?.reduced_rates, [7, 14]);
    assert.equal(on('om', '2021-04-15'), null, 'Oman had no VAT before 2021-04-16');
    assert.equal(on('om', '2021-04-16')?.standard_rate, 5);
  });

  it("has Canada's HST provinces, with Nova Scotia's 14% from 2025-04-01", () => {
    const rates = (date: string) =>
      Object.fromEntries(
        regionsOn(country('ca'), date).map(({ region, period }) => [region.code, period.standard_rate]),
      );
    assert.deepEqual(rates('2025-03-31'), {
      'ca-nb': 15,
      'ca-nl': 15,
      'ca-ns': 15,
      'ca-on': 13,
      'ca-pe': 15,
    });
    assert.equal(rates('2025-04-01')['ca-ns'], 14);
    assert.equal(rates('2026-11-28')['ca-on'], 13);
    assert.deepEqual(country('de').regions, []);
  });

  it('has the thresholds for sellers established abroad as the countries publish them', () => {
    const nonResident = (code: string) => country(code).registration_threshold?.non_resident;
    assert.deepEqual(nonResident('au'), { amount: 75000, currency: 'AUD' });
    assert.deepEqual(nonResident('nz'), { amount: 60000, currency: 'NZD' });
    assert.deepEqual(nonResident('sg'), { amount: 100000, currency: 'SGD' });
    assert.deepEqual(nonResident('ca'), { amount: 30000, currency: 'CAD' });
    assert.deepEqual(nonResident('ua'), { amount: 1000000, currency: 'UAH' });
    assert.deepEqual(nonResident('kr'), { amount: 0, currency: 'KRW' }, 'from the first sale');
    assert.deepEqual(nonResident('sa'), { amount: 0, currency: 'SAR' });
    assert.deepEqual(nonResident('de'), { amount: 0, currency: 'EUR' }, 'sellers outside the EU: first sale');
    assert.equal(nonResident('rs'), null, 'not tracked where the file has none');
  });
});

function withCanada(mutate: (ca: Record<string, unknown>) => void): Record<string, unknown> {
  const doc = JSON.parse(JSON.stringify(dataset)) as { countries: Record<string, unknown>[] };
  const ca = doc.countries.find((c) => c.country_code === 'ca') as Record<string, unknown>;
  mutate(ca);
  return doc;
}

type Region = { code: string; periods: Array<Record<string, unknown>> } & Record<string, unknown>;
const regionsOf = (ca: Record<string, unknown>) => ca.regions as Region[];

describe('parseRatesDataset: regions and non-resident thresholds', () => {
  it('round-trips the dataset', () => {
    assert.equal(
      parseRatesDataset(JSON.parse(JSON.stringify(dataset))).countries.length,
      dataset.countries.length,
    );
  });

  it('rejects a region code that is not a subdivision of the country', () => {
    const doc = withCanada((ca) => {
      (regionsOf(ca)[0] as Region).code = 'us-ny';
    });
    assert.throws(() => parseRatesDataset(doc), /\(ca\)\.regions\[0\]\.code: must be an ISO 3166-2 code/);
  });

  it('rejects a duplicate region', () => {
    const doc = withCanada((ca) => {
      regionsOf(ca).push(structuredClone(regionsOf(ca)[0] as Region));
    });
    assert.throws(() => parseRatesDataset(doc), /regions\[5\]\.code: duplicate region code "ca-nb"/);
  });

  it('rejects a gap or an unknown field in a region period', () => {
    const gap = withCanada((ca) => {
      const ns = regionsOf(ca).find((r) => r.code === 'ca-ns') as Region;
      (ns.periods[1] as Record<string, unknown>).from = '2025-04-02';
    });
    assert.throws(() => parseRatesDataset(gap), /regions\[2\]\.periods\[1\]\.from: leaves a gap/);
    const extra = withCanada((ca) => {
      ((regionsOf(ca)[0] as Region).periods[0] as Record<string, unknown>).reduced_rates = [];
    });
    assert.throws(
      () => parseRatesDataset(extra),
      /regions\[0\]\.periods\[0\]: unknown field "reduced_rates"/,
    );
    const rate = withCanada((ca) => {
      ((regionsOf(ca)[0] as Region).periods[0] as Record<string, unknown>).standard_rate = 150;
    });
    assert.throws(() => parseRatesDataset(rate), /periods\[0\]\.standard_rate: must be a percentage/);
  });

  it('rejects regions that are not an array, and a region without a name', () => {
    assert.throws(
      () =>
        parseRatesDataset(
          withCanada((ca) => {
            ca.regions = {};
          }),
        ),
      /\(ca\)\.regions: must be an array/,
    );
    assert.throws(
      () =>
        parseRatesDataset(
          withCanada((ca) => {
            delete (regionsOf(ca)[0] as Region).name;
          }),
        ),
      /regions\[0\]: missing field "name"/,
    );
  });

  it('rejects a malformed non-resident threshold', () => {
    const threshold = (ca: Record<string, unknown>) => ca.registration_threshold as Record<string, unknown>;
    const noCurrency = withCanada((ca) => {
      threshold(ca).non_resident = { amount: 30000 };
    });
    assert.throws(() => parseRatesDataset(noCurrency), /non_resident: missing field "currency"/);
    const negative = withCanada((ca) => {
      threshold(ca).non_resident = { amount: -1, currency: 'CAD' };
    });
    assert.throws(() => parseRatesDataset(negative), /non_resident\.amount: must be a non-negative number/);
    const nullAmount = withCanada((ca) => {
      threshold(ca).non_resident = { amount: null, currency: 'CAD' };
    });
    assert.throws(() => parseRatesDataset(nullAmount), /non_resident\.amount: must be a non-negative number/);
    const badCurrency = withCanada((ca) => {
      threshold(ca).non_resident = { amount: 1, currency: 'cad' };
    });
    assert.throws(() => parseRatesDataset(badCurrency), /non_resident\.currency: must be an ISO 4217 code/);
  });

  it('reads a row without regions or non_resident (an older dataset file) as none and not tracked', () => {
    const doc = withCanada((ca) => {
      delete ca.regions;
      delete (ca.registration_threshold as Record<string, unknown>).non_resident;
    });
    const ca = parseRatesDataset(doc).countries.find((c) => c.country_code === 'ca');
    assert.deepEqual(ca?.regions, []);
    assert.equal(ca?.registration_threshold?.non_resident, null);
  });
});
