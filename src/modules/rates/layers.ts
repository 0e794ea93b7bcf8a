/**
 * The rates in force: the curated dataset with the changes the sync learnt (and an operator
 * applied) layered over it. A change sets a country's rates from its first day until the next
 * change or the next curated period, whichever starts first: a newer curated period (an upgrade
 * that knows of a later change) takes over from its own start, and a learnt change wins over a
 * curated period that starts the same day.
 */
import type { CountryRates, RatePeriod, RatesDataset } from './dataset.js';
import type { RateChangeRow } from './repository.js';

/** The rates of one period, without its range. */
export interface PeriodRates {
  standard_rate: number;
  reduced_rates: number[];
  super_reduced_rate: number | null;
  parking_rate: number | null;
}

export interface AppliedChange {
  /** Lower case, as in the dataset. */
  country: string;
  /** First day in force, `YYYY-MM-DD`. */
  from: string;
  rates: PeriodRates;
  /** The day it was learnt, `YYYY-MM-DD`. */
  learntOn: string;
  /** Where it comes from (`tedb`); an operator's override is `override` whatever this says. */
  source?: string;
}

/** Where a layered period's rates come from. */
export type PeriodSource = 'curated' | 'override' | string;

/** A layered country: its periods, and for each period start the day the row was last refreshed. */
export interface LayeredCountry extends CountryRates {
  /** `updated_at` of a period's answer: the later of the curated row's and the learnt change's day. */
  refreshedOn: ReadonlyMap<string, string>;
  /** For each period start, where its rates come from: `curated`, `tedb`, `override`. */
  periodSources: ReadonlyMap<string, PeriodSource>;
}

export interface LayeredDataset {
  readonly curatedVersion: string;
  readonly countries: LayeredCountry[];
  /** Per day on which something learnt was learnt or took effect: the `data_version` from that day on. */
  readonly versions: readonly string[];
}

/** Whether two sets of rates are the same. */
export function sameRates(a: PeriodRates, b: PeriodRates): boolean {
  return (
    a.standard_rate === b.standard_rate &&
    a.super_reduced_rate === b.super_reduced_rate &&
    a.parking_rate === b.parking_rate &&
    a.reduced_rates.length === b.reduced_rates.length &&
    a.reduced_rates.every((rate, i) => rate === b.reduced_rates[i])
  );
}

/** The learnt changes of stored rows (a row without rates adds none), each with its row's id. */
export function changesOfRows(rows: readonly RateChangeRow[]): (AppliedChange & { id: string })[] {
  const changes: (AppliedChange & { id: string })[] = [];
  for (const row of rows) {
    const parsed = JSON.parse(row.rates) as PeriodRates | null;
    if (parsed)
      changes.push({
        id: row.id,
        country: row.country_code,
        from: row.valid_from,
        rates: parsed,
        learntOn: row.learnt_at.slice(0, 10),
        source: row.source,
      });
  }
  return changes;
}

export function ratesOf(period: RatePeriod): PeriodRates {
  return {
    standard_rate: period.standard_rate,
    reduced_rates: [...period.reduced_rates],
    super_reduced_rate: period.super_reduced_rate,
    parking_rate: period.parking_rate,
  };
}

function dayBefore(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
}

/**
 * One country's periods with its changes layered over them (changes sorted by day, then learnt),
 * and an operator's overrides over both.
 */
function layerCountry(
  country: CountryRates,
  changes: readonly AppliedChange[],
  overrides: readonly AppliedChange[] = [],
): LayeredCountry {
  const refreshedOn = new Map<string, string>();
  const periodSources = new Map<string, PeriodSource>();
  if (changes.length === 0 && overrides.length === 0) {
    for (const p of country.periods) {
      refreshedOn.set(p.from, country.updated_at);
      periodSources.set(p.from, 'curated');
    }
    return { ...country, refreshedOn, periodSources };
  }
  type Event = { from: string; rates: PeriodRates; refreshed: string; order: number; source: string };
  const events: Event[] = [
    ...country.periods.map((p, i) => ({
      from: p.from,
      rates: ratesOf(p),
      refreshed: country.updated_at,
      order: i,
      source: 'curated',
    })),
    ...changes.map((c, i) => ({
      from: c.from,
      rates: c.rates,
      refreshed: c.learntOn > country.updated_at ? c.learntOn : country.updated_at,
      order: 1_000_000 + i,
      source: c.source ?? 'tedb',
    })),
    ...overrides.map((c, i) => ({
      from: c.from,
      rates: c.rates,
      refreshed: c.learntOn > country.updated_at ? c.learntOn : country.updated_at,
      order: 2_000_000 + i,
      source: 'override',
    })),
  ].sort((a, b) => (a.from === b.from ? a.order - b.order : a.from < b.from ? -1 : 1));
  // Of several events on one day the last (a learnt change over a curated period) is kept.
  const kept = events.filter((e, i) => events[i + 1]?.from !== e.from);
  const periods: RatePeriod[] = kept.map((e, i) => {
    const next = kept[i + 1];
    refreshedOn.set(e.from, e.from > e.refreshed && e.order >= 1_000_000 ? e.from : e.refreshed);
    periodSources.set(e.from, e.source);
    return { from: e.from, to: next ? dayBefore(next.from) : null, ...e.rates };
  });
  const latest = [...refreshedOn.values()].sort().at(-1) ?? country.updated_at;
  return { ...country, updated_at: latest, periods, refreshedOn, periodSources };
}

export function layerChanges(
  curated: RatesDataset,
  changes: readonly AppliedChange[],
  overrides: readonly AppliedChange[] = [],
): LayeredDataset {
  const byCountry = new Map<string, AppliedChange[]>();
  // Sorted by first day, then the day learnt; the sort is stable, so changes learnt the same day
  // keep the order given (the repository's: by the instant learnt).
  for (const change of [...changes].sort((a, b) =>
    a.from === b.from
      ? a.learntOn === b.learntOn
        ? 0
        : a.learntOn < b.learntOn
          ? -1
          : 1
      : a.from < b.from
        ? -1
        : 1,
  )) {
    const list = byCountry.get(change.country) ?? [];
    list.push(change);
    byCountry.set(change.country, list);
  }
  const overridden = new Map<string, AppliedChange[]>();
  for (const o of overrides) overridden.set(o.country, [...(overridden.get(o.country) ?? []), o]);
  const countries = curated.countries.map((c) =>
    layerCountry(c, byCountry.get(c.country_code) ?? [], overridden.get(c.country_code) ?? []),
  );
  const versions = [
    ...new Set([
      ...changes.flatMap((c) => [c.learntOn, c.from > c.learntOn ? c.from : c.learntOn]),
      ...overrides.map((o) => o.from),
    ]),
  ]
    .filter((day) => day > curated.data_version)
    .sort();
  return { curatedVersion: curated.data_version, countries, versions };
}

/** The dataset's `data_version` on a day: the curated one, or the latest day something learnt changed it. */
export function versionOn(layered: LayeredDataset, day: string): string {
  let version = layered.curatedVersion;
  for (const v of layered.versions) if (v <= day) version = v;
  return version;
}
