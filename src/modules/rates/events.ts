/**
 * When the rates in force for a country change: pure functions over the layered dataset. A learnt
 * change (applied by the sync, or accepted by an operator) is an announcement while its first day is
 * ahead in the country's time zone, and changes the rates in force at once when that day has come; a
 * period (learnt, curated or an override) whose first day starts, in the country's time zone, changes
 * the rates in force from that moment.
 */
import { ratesOn } from './dataset.js';
import {
  type LayeredCountry,
  type LayeredDataset,
  type PeriodRates,
  ratesOf,
  sameRates,
  versionOn,
} from './layers.js';
import { dayInZone, timeZoneOf } from './time-zones.js';

export type RatesChangeKind = 'announced' | 'in_force';

export interface RatesChange {
  country: LayeredCountry;
  kind: RatesChangeKind;
  /** The first day of the new rates, `YYYY-MM-DD`, in the country's time zone. */
  effectiveFrom: string;
  before: PeriodRates;
  after: PeriodRates;
  /** Where the new rates come from: `tedb`, `curated` or `override`. */
  source: string;
  /** The `data_version` of the country's answers when the change was noticed. */
  dataVersion: string;
}

function dayBefore(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
}

function countryOf(layered: LayeredDataset, code: string): LayeredCountry | undefined {
  return layered.countries.find((c) => c.country_code === code);
}

/**
 * What a learnt change starting on `from` means now: an announcement (the rates until then, and from
 * then) while its day is ahead, a change of the rates in force (the rates served without it, and with
 * it) once its day has come; null when it changes nothing that is served (an override wins that day,
 * the same rates as before, or a later period applies already). `without` is the dataset without it.
 */
export function learntChange(
  layered: LayeredDataset,
  without: () => LayeredDataset,
  change: { country: string; from: string },
  now: number,
): RatesChange | null {
  const country = countryOf(layered, change.country);
  if (!country) return null;
  const today = dayInZone(timeZoneOf(country.country_code), now).day;
  const dataVersion = versionOn(layered, today);
  const source = country.periodSources.get(change.from) ?? 'tedb';
  if (change.from > today) {
    const period = ratesOn(country, change.from);
    const previous = ratesOn(country, dayBefore(change.from));
    if (!period || period.from !== change.from || !previous) return null;
    if (sameRates(ratesOf(previous), ratesOf(period))) return null;
    return {
      country,
      kind: 'announced',
      effectiveFrom: change.from,
      before: ratesOf(previous),
      after: ratesOf(period),
      source,
      dataVersion,
    };
  }
  const current = ratesOn(country, today);
  if (!current || current.from !== change.from) return null;
  const old = countryOf(without(), change.country);
  const served = old ? ratesOn(old, today) : null;
  if (!served || sameRates(ratesOf(served), ratesOf(current))) return null;
  return {
    country,
    kind: 'in_force',
    effectiveFrom: change.from,
    before: ratesOf(served),
    after: ratesOf(current),
    source,
    dataVersion,
  };
}

/**
 * The countries whose current period started, in their time zone, after the instant `from` and by
 * `to`, with rates other than the period before it.
 */
export function periodsStarted(layered: LayeredDataset, from: number, to: number): RatesChange[] {
  const started: RatesChange[] = [];
  for (const country of layered.countries) {
    const zone = timeZoneOf(country.country_code);
    const then = dayInZone(zone, from).day;
    const today = dayInZone(zone, to).day;
    if (today <= then) continue;
    const current = ratesOn(country, today);
    if (!current || current.from <= then) continue;
    const previous = ratesOn(country, dayBefore(current.from));
    if (!previous || sameRates(ratesOf(previous), ratesOf(current))) continue;
    started.push({
      country,
      kind: 'in_force',
      effectiveFrom: current.from,
      before: ratesOf(previous),
      after: ratesOf(current),
      source: country.periodSources.get(current.from) ?? 'curated',
      dataVersion: versionOn(layered, today),
    });
  }
  return started;
}

/** The rates as the API shows them (the country rate object's four rate fields). */
function shown(rates: PeriodRates) {
  return {
    standard_rate: rates.standard_rate,
    reduced_rates: [...rates.reduced_rates],
    super_reduced_rate: rates.super_reduced_rate,
    parking_rate: rates.parking_rate,
  };
}

/** The key that makes a change one event, whichever instance notices it: the new rates, as JSON text. */
export function ratesKey(change: RatesChange): string {
  return JSON.stringify(shown(change.after));
}

/**
 * The `data` of a `rates.changed` delivery: the change, and in `meta.request_id` the event's id (no
 * request causes it; receivers deduplicate every event on `data.meta.request_id`).
 */
export function ratesChangedPayload(change: RatesChange, eventId: string): string {
  return JSON.stringify({
    data: {
      country_code: change.country.country_code,
      country_name: change.country.country_name,
      status: change.kind,
      effective_from: change.effectiveFrom,
      time_zone: timeZoneOf(change.country.country_code),
      before: shown(change.before),
      after: shown(change.after),
      source: change.source,
      data_version: change.dataVersion,
    },
    meta: { request_id: eventId },
  });
}
