import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRatesDataset } from '../../src/modules/rates/dataset.js';

function minimal(): Record<string, unknown> {
  return {
    data_version: '2026-11-22',
    countries: [
      {
        country_code: 'de',
        country_name: 'Germany',
        country_name_local: 'Deutschland',
        currency: 'EUR',
        is_eu_member: true,
        vat_name: 'Umsatzsteuer',
        vat_abbr: 'USt',
        vat_number_format: 'DE + 9 digits',
        vat_number_regex: '^DE[0-9]{9}$',
        registration_threshold: { domestic: 25000, distance_selling: 10000, currency: 'EUR' },
        updated_at: '2026-11-22',
        sources: [{ title: 'Source', url: 'https://example.org/a', checked: '2026-11-22' }],
        periods: [
          {
            from: '2020-01-01',
            to: '2020-06-30',
            standard_rate: 19,
            reduced_rates: [7],
            super_reduced_rate: null,
            parking_rate: null,
          },
          {
            from: '2020-07-01',
            to: '2020-12-31',
            standard_rate: 16,
            reduced_rates: [5],
            super_reduced_rate: null,
            parking_rate: null,
          },
          {
            from: '2021-01-01',
            to: null,
            standard_rate: 19,
            reduced_rates: [7],
            super_reduced_rate: null,
            parking_rate: null,
          },
        ],
      },
    ],
  };
}

type Mutable = Record<string, unknown> & { periods: Record<string, unknown>[] };

function firstCountry(doc: Record<string, unknown>): Mutable {
  return (doc.countries as Mutable[])[0] as Mutable;
}

function period(doc: Record<string, unknown>, i: number): Record<string, unknown> {
  return firstCountry(doc).periods[i] as Record<string, unknown>;
}

describe('parseRatesDataset', () => {
  it('accepts a well-formed minimal dataset', () => {
    const parsed = parseRatesDataset(minimal());
    assert.equal(parsed.countries[0]?.periods.length, 3);
  });

  it('rejects a gap between periods', () => {
    const doc = minimal();
    period(doc, 1).from = '2020-07-02';
    assert.throws(() => parseRatesDataset(doc), /countries\[0\] \(de\)\.periods\[1\]\.from: leaves a gap/);
  });

  it('rejects overlapping periods', () => {
    const doc = minimal();
    period(doc, 1).from = '2020-06-15';
    assert.throws(() => parseRatesDataset(doc), /periods\[1\]\.from: overlaps/);
  });

  it('rejects unsorted periods', () => {
    const doc = minimal();
    const ps = firstCountry(doc).periods;
    firstCountry(doc).periods = [ps[1], ps[0], ps[2]] as Record<string, unknown>[];
    assert.throws(() => parseRatesDataset(doc), /periods\[1\]\.from: periods are not sorted/);
  });

  it('rejects a closed last period', () => {
    const doc = minimal();
    period(doc, 2).to = '2030-12-31';
    assert.throws(() => parseRatesDataset(doc), /periods\[2\]\.to: the last period must be open/);
  });

  it('rejects an open period that is not the last', () => {
    const doc = minimal();
    period(doc, 1).to = null;
    assert.throws(() => parseRatesDataset(doc), /periods\[1\]\.to: only the last period may be open/);
  });

  it('rejects a missing field', () => {
    const doc = minimal();
    delete firstCountry(doc).vat_abbr;
    assert.throws(() => parseRatesDataset(doc), /countries\[0\] \(de\): missing field "vat_abbr"/);
  });

  it('rejects an unknown field', () => {
    const doc = minimal();
    period(doc, 0).increased_rate = 25;
    assert.throws(() => parseRatesDataset(doc), /periods\[0\]: unknown field "increased_rate"/);
  });

  it('rejects an unknown top-level field', () => {
    const doc = minimal();
    doc.extra = true;
    assert.throws(() => parseRatesDataset(doc), /\(root\): unknown field "extra"/);
  });

  it('rejects a regex that does not compile', () => {
    const doc = minimal();
    firstCountry(doc).vat_number_regex = '^DE[0-9{9}$';
    assert.throws(() => parseRatesDataset(doc), /vat_number_regex: does not compile/);
  });

  it('rejects an unanchored regex', () => {
    const doc = minimal();
    firstCountry(doc).vat_number_regex = 'DE[0-9]{9}';
    assert.throws(() => parseRatesDataset(doc), /vat_number_regex: must be anchored/);
  });

  it('rejects rates outside 0..100', () => {
    const doc = minimal();
    period(doc, 0).standard_rate = 119;
    assert.throws(() => parseRatesDataset(doc), /periods\[0\]\.standard_rate: must be a percentage/);
    const doc2 = minimal();
    period(doc2, 0).reduced_rates = [0, 7];
    assert.throws(() => parseRatesDataset(doc2), /reduced_rates\[0\]: must be a percentage/);
  });

  it('rejects reduced rates out of order', () => {
    const doc = minimal();
    period(doc, 0).reduced_rates = [7, 5];
    assert.throws(() => parseRatesDataset(doc), /reduced_rates: must be strictly ascending/);
  });

  it('rejects an uppercase country code', () => {
    const doc = minimal();
    firstCountry(doc).country_code = 'DE';
    assert.throws(() => parseRatesDataset(doc), /country_code: must be two lowercase letters/);
  });

  it('rejects duplicate country codes', () => {
    const doc = minimal();
    const countries = doc.countries as unknown[];
    countries.push(structuredClone(countries[0]));
    assert.throws(() => parseRatesDataset(doc), /countries\[1\]\.country_code: duplicate country code "de"/);
  });

  it('rejects a data_version that is not a date', () => {
    const doc = minimal();
    doc.data_version = '2026-13-01';
    assert.throws(() => parseRatesDataset(doc), /data_version: must be a valid date/);
  });

  it('rejects a non-object root', () => {
    assert.throws(() => parseRatesDataset([]), /\(root\): must be an object/);
  });

  it('rejects a bad threshold currency', () => {
    const doc = minimal();
    firstCountry(doc).registration_threshold = { domestic: 1, distance_selling: null, currency: 'eur' };
    assert.throws(() => parseRatesDataset(doc), /registration_threshold\.currency: must be an ISO 4217 code/);
  });
});
