/**
 * How TEDB's rows become the API's rates: the rules that keep TEDB's quirks out of what openvat
 * serves, each named after the trap it avoids. The result follows the conventions of the curated
 * dataset (the European Commission's classic table of rates):
 *
 * 1. Not rates: `EXEMPTED`, `OUT_OF_SCOPE` and `NOT_APPLICABLE` rows (TEDB sends them with 0.0), rows
 *    without a value, and rows of 0% whatever their label (a zero rate also comes as a `REDUCED_RATE`
 *    or `SUPER_REDUCED_RATE` of 0.0) are dropped — read as bands they would zero-rate e.g. Danish
 *    newspapers, or make 0% a country's super-reduced rate; the classic table has no 0% band.
 * 2. Regional rates are not the country's: rows of category `REGION` (Austria's 19% for Jungholz and
 *    Mittelberg, Madeira, the Greek islands) and rows whose comment names the Canary Islands, the
 *    Azores or Madeira are dropped.
 * 3. The standard rate is the one remaining `STANDARD` row; if several remain, the highest (Spain's
 *    21 beside the Canary Islands' 7 when the comment is missing), never the first or last.
 * 4. Labels are read by value, as the classic table does, because TEDB's do not always agree with it
 *    (PL 8, PT 6, GR 13 labelled super-reduced): a rate below 5% is super-reduced (the lowest; any
 *    other below 5% stays a reduced rate), one of 5% or more a reduced rate — except a row labelled
 *    `PARKING_RATE` with 12% or more, which is the parking rate and a reduced rate only when another
 *    row also applies it as one (Luxembourg's 14% is a parking rate only; Austria's 13% is both).
 * 5. Reduced rates are distinct, ascending, and below the standard rate, as is the parking rate.
 */
import type { TedbRateRow } from '../../registries/tedb.js';

export interface TedbRates {
  standard_rate: number;
  reduced_rates: number[];
  super_reduced_rate: number | null;
  parking_rate: number | null;
}

export type TedbRatesOutcome =
  | { kind: 'rates'; rates: TedbRates }
  /** The rows do not describe a country's rates (no standard rate, or a reduced or parking rate above it). */
  | { kind: 'unusable'; reason: string };

const NOT_RATES = new Set(['EXEMPTED', 'OUT_OF_SCOPE', 'NOT_APPLICABLE']);
const REGIONAL_COMMENT = /canar|azores|a[çc]ores|madeira|jungholz|mittelberg|island/i;

/** Whether a row is a rate of the whole country (rules 1 and 2). */
export function isCountryRate(row: TedbRateRow): boolean {
  if (row.value === null || row.value === 0 || NOT_RATES.has(row.rateType)) return false;
  if (row.category?.identifier.toUpperCase() === 'REGION') return false;
  if (row.comment && REGIONAL_COMMENT.test(row.comment)) return false;
  return true;
}

/** The rates of one country on one day, from the rows TEDB answered for that day. */
export function ratesFromTedbRows(rows: readonly TedbRateRow[]): TedbRatesOutcome {
  const rates = rows.filter(isCountryRate);
  const standards = rates.filter((r) => r.type === 'STANDARD').map((r) => r.value as number);
  if (standards.length === 0) return { kind: 'unusable', reason: 'no standard rate' };
  const standard = Math.max(...standards);
  const reduced = rates.filter((r) => r.type !== 'STANDARD');
  const parkingRows = reduced.filter((r) => r.rateType === 'PARKING_RATE' && (r.value as number) >= 12);
  const parking = parkingRows.length > 0 ? Math.max(...parkingRows.map((r) => r.value as number)) : null;
  const others = reduced.filter((r) => !parkingRows.includes(r)).map((r) => r.value as number);
  const below5 = [...new Set(others.filter((v) => v < 5))].sort((a, b) => a - b);
  const superReduced = below5[0] ?? null;
  const reducedRates = [...new Set([...below5.slice(1), ...others.filter((v) => v >= 5)])].sort(
    (a, b) => a - b,
  );
  const above = reducedRates.find((v) => v >= standard);
  if (above !== undefined) {
    return {
      kind: 'unusable',
      reason: `a reduced rate of ${above}% is not below the standard rate of ${standard}%`,
    };
  }
  if (parking !== null && parking >= standard) {
    return {
      kind: 'unusable',
      reason: `the parking rate of ${parking}% is not below the standard rate of ${standard}%`,
    };
  }
  return {
    kind: 'rates',
    rates: {
      standard_rate: standard,
      reduced_rates: reducedRates,
      super_reduced_rate: superReduced,
      parking_rate: parking,
    },
  };
}
