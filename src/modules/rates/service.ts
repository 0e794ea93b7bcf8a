import type { Clock } from '../../lib/clock.js';
import { deepFreeze } from '../../lib/freeze.js';
import { type Refusal, refusal } from '../../lib/refusal.js';
import { type RatePeriod, type RatesDataset, ratesOn, regionsOn } from './dataset.js';
import { type LayeredCountry, type LayeredDataset, layerChanges, versionOn } from './layers.js';
import { dayInZone, timeZoneOf } from './time-zones.js';

/** Countries whose VAT numbers `/v1/validate` can check against a live registry. */
const LIVE_VALIDATION = new Set([
  'at',
  'be',
  'bg',
  'cy',
  'cz',
  'de',
  'dk',
  'ee',
  'gr',
  'es',
  'fi',
  'fr',
  'hr',
  'hu',
  'ie',
  'it',
  'lt',
  'lu',
  'lv',
  'mt',
  'nl',
  'pl',
  'pt',
  'ro',
  'se',
  'si',
  'sk',
  'xi',
  'gb',
  'ch',
  'no',
]);

/** The public country rate object (spec §2.8), built field by field so nothing internal leaks. */
export interface CountryRateObject {
  country_code: string;
  country_name: string;
  country_name_local: string;
  currency: string;
  is_eu_member: boolean;
  supports_live_validation: boolean;
  standard_rate: number;
  reduced_rates: number[];
  super_reduced_rate: number | null;
  parking_rate: number | null;
  vat_name: string;
  vat_abbr: string;
  vat_number_format: string;
  vat_number_regex: string;
  registration_threshold: {
    domestic: number | null;
    distance_selling: number | null;
    currency: string;
    /** openvat's addition: the threshold for sellers established abroad (digital services to consumers). */
    non_resident: { amount: number; currency: string } | null;
  } | null;
  updated_at: string;
  /** openvat's addition: the regions with their own rate (Canada's HST provinces), in force that day. */
  regions: RegionRateObject[];
}

export interface RegionRateObject {
  code: string;
  name: string;
  vat_name: string;
  vat_abbr: string;
  standard_rate: number;
  /** First day of the region's rate in force. */
  from: string;
}

/** A rates answer, pre-serialised: the JSON of `data`, its length in UTF-8 bytes, and its entity tag. */
export interface RatesAnswer {
  json: string;
  bytes: number;
  etag: string;
  /** `meta.data_version` of the answer (`YYYY-MM-DD`). */
  version: string;
  /** For the list: the number of countries in it (`meta.count`). */
  count?: number;
}

function answerOf(json: string, etag: string, version: string, count?: number): RatesAnswer {
  return { json, bytes: Buffer.byteLength(json), etag, version, ...(count !== undefined ? { count } : {}) };
}

/** One country's answer, or `not_found`: a country without rates, or none on the day asked. */
export type RatesLookup = { kind: 'ok'; answer: RatesAnswer } | Refusal;

/** The refusal of a code (as asked) that no country's rates have. */
function unknownCountry(code: string): Refusal {
  const asked = code.toLowerCase();
  return refusal(
    'not_found',
    asked === 'el'
      ? 'No VAT rates for country "el": EL is Greece\'s VAT prefix; its ISO 3166-1 code is "gr" (GET /v1/rates/gr).'
      : `No VAT rates for country "${asked}".`,
  );
}

/** The refusal of a day before a country's recorded history. */
function noRatesOn(code: string, day: string, firstDate: string): Refusal {
  return refusal(
    'not_found',
    `No rates recorded for "${code.toLowerCase()}" on ${day}; the history starts on ${firstDate}.`,
  );
}

function toObject(country: LayeredCountry, period: RatePeriod, day: string): CountryRateObject {
  const t = country.registration_threshold;
  return {
    country_code: country.country_code,
    country_name: country.country_name,
    country_name_local: country.country_name_local,
    currency: country.currency,
    is_eu_member: country.is_eu_member,
    supports_live_validation: LIVE_VALIDATION.has(country.country_code),
    standard_rate: period.standard_rate,
    reduced_rates: [...period.reduced_rates],
    super_reduced_rate: period.super_reduced_rate,
    parking_rate: period.parking_rate,
    vat_name: country.vat_name,
    vat_abbr: country.vat_abbr,
    vat_number_format: country.vat_number_format,
    vat_number_regex: country.vat_number_regex,
    registration_threshold: t
      ? {
          domestic: t.domestic,
          distance_selling: t.distance_selling,
          currency: t.currency,
          non_resident: t.non_resident
            ? { amount: t.non_resident.amount, currency: t.non_resident.currency }
            : null,
        }
      : null,
    updated_at: country.refreshedOn.get(period.from) ?? country.updated_at,
    regions: regionsOn(country, day).map(({ region, period: p }) => ({
      code: region.code,
      name: region.name,
      vat_name: region.vat_name,
      vat_abbr: region.vat_abbr,
      standard_rate: p.standard_rate,
      from: p.from,
    })),
  };
}

/**
 * The first day of the answer in force on `day`: the country's period's start, or a later start of
 * a region's rate (a province's change is a change of the country's answer, its ETag included).
 */
function answerSince(country: LayeredCountry, period: RatePeriod, day: string): string {
  let since = period.from;
  if (country.regions.length === 0) return since;
  for (const { period: p } of regionsOn(country, day)) if (p.from > since) since = p.from;
  return since;
}

/**
 * Rates reference data, in-process: the curated dataset with the changes the sync learnt layered
 * over it (`replace`). Answers are serialised once per (country, period) and reused, so a rates
 * request costs a map look-up. "Today" is each country's own day, in its time zone: a change from
 * 1 August applies from midnight there, on every instance, without a restart.
 */
export function createRatesService(deps: { dataset: RatesDataset; clock: Clock }) {
  const { clock } = deps;
  let layered: LayeredDataset = layerChanges(deps.dataset, []);
  let byCode = new Map<string, LayeredCountry>();
  let sorted: LayeredCountry[] = [];
  const answers = new Map<string, RatesAnswer>();
  /** Answers by country and day, so a request for a past or future day is one map look-up. */
  const byDay = new Map<string, RatesLookup>();
  /** Today's answers by the code as asked, until the country's day ends. */
  const todays = new Map<string, { lookup: RatesLookup; validUntil: number }>();
  /**
   * Rate objects by code and day, shared and frozen: a decision asks for the same two countries' up
   * to six times (rates, names), and building each anew was 4% of a decide call's CPU profile.
   */
  const objects = new Map<string, CountryRateObject | null>();
  /** Each country's day by the code as asked, until it ends. */
  const days = new Map<string, { day: string; validUntil: number }>();

  function load(next: LayeredDataset): void {
    layered = next;
    byCode = new Map(next.countries.map((c) => [c.country_code, c]));
    sorted = [...next.countries].sort((a, b) => a.country_code.localeCompare(b.country_code));
    answers.clear();
    byDay.clear();
    todays.clear();
    objects.clear();
  }
  load(layered);

  /** The country's day now, in its time zone, and until when it holds. */
  function todayOf(code: string, now: number): { day: string; validUntil: number } {
    return dayInZone(timeZoneOf(code), now);
  }

  /** The dataset's version as of the latest day any country has reached. */
  function latestDay(now: number): string {
    // UTC+14 is the most advanced zone; no country's day is later than the UTC day of now + 14 h.
    let latest = '';
    for (const country of sorted) {
      const { day } = todayOf(country.country_code, now);
      if (day > latest) latest = day;
    }
    return latest || new Date(now).toISOString().slice(0, 10);
  }

  /** A known country's answer on `day` (or the refusal of a day before its history); undefined for an unknown code. */
  function lookup(code: string, day: string, versionDay: string): RatesLookup | undefined {
    const country = byCode.get(code.toLowerCase());
    if (!country) return undefined;
    const period = ratesOn(country, day);
    return period
      ? { kind: 'ok', answer: countryAnswer(country, period, day, versionOn(layered, versionDay)) }
      : noRatesOn(code, day, country.periods[0]?.from ?? '');
  }

  /** Memoises answers for known countries, bounded: one entry per spelling of a code and day asked for. */
  function remember(key: string, code: string, answer: RatesLookup | undefined): RatesLookup {
    if (answer === undefined) return unknownCountry(code);
    if (byDay.size >= 50_000) byDay.clear();
    byDay.set(key, answer);
    return answer;
  }

  function countryAnswer(
    country: LayeredCountry,
    period: RatePeriod,
    day: string,
    version: string,
  ): RatesAnswer {
    const since = answerSince(country, period, day);
    const key = `${country.country_code}|${since}|${version}`;
    let answer = answers.get(key);
    if (!answer) {
      answer = answerOf(
        JSON.stringify(toObject(country, period, day)),
        `W/"${version}-${country.country_code}-${since}"`,
        version,
      );
      if (answers.size >= 10_000) answers.clear();
      answers.set(key, answer);
    }
    return answer;
  }

  return {
    /** The `data_version` of today's answers (the latest day any country has reached). */
    dataVersion(): string {
      return versionOn(layered, latestDay(clock.millis()));
    },

    /** The rates in force: curated and learnt. */
    layered(): LayeredDataset {
      return layered;
    },

    /** Serves `next` from now on (the sync learnt or an operator decided something). */
    replace(next: LayeredDataset): void {
      load(next);
    },

    /** Today's day (`YYYY-MM-DD`) in a country's time zone (formatted once per country and hour at most). */
    today(code: string): string {
      const now = clock.millis();
      const cached = days.get(code);
      if (cached && now < cached.validUntil && now >= cached.validUntil - 86_400_000) return cached.day;
      const today = todayOf(code, now);
      if (days.size >= 1_000) days.clear();
      days.set(code, today);
      return today.day;
    },

    /** Rates of one country in force on `date` (default: today, in its time zone). `code` is matched case-insensitively. */
    country(code: string, date?: string): RatesLookup {
      const now = clock.millis();
      if (date === undefined) {
        const cached = todays.get(code);
        // An answer holds at most an hour from when it was made (a clock set back finds it stale).
        if (cached && now < cached.validUntil && now >= cached.validUntil - 3_600_000) return cached.lookup;
        const today = todayOf(code, now);
        const found = lookup(code, today.day, today.day);
        if (found === undefined) return unknownCountry(code);
        if (todays.size >= 10_000) todays.clear();
        todays.set(code, { lookup: found, validUntil: today.validUntil });
        return found;
      }
      const today = todayOf(code, now);
      const key = `${code}|${date}|${today.day}`;
      return byDay.get(key) ?? remember(key, code, lookup(code, date, today.day));
    },

    /** Every country's rates in force on `date` (default: each country's today); countries without rates that day are left out. */
    list(date?: string): RatesAnswer {
      const now = clock.millis();
      const version = versionOn(layered, latestDay(now));
      const days = sorted.map((c) => date ?? todayOf(c.country_code, now).day);
      const key = `*|${date ?? days.join(',')}|${version}`;
      let answer = answers.get(key);
      if (!answer) {
        const parts: string[] = [];
        const froms: string[] = [];
        sorted.forEach((country, i) => {
          const day = days[i] as string;
          const period = ratesOn(country, day);
          if (!period) return;
          parts.push(countryAnswer(country, period, day, version).json);
          froms.push(answerSince(country, period, day));
        });
        const latest = froms.sort().at(-1) ?? 'none';
        answer = answerOf(`[${parts.join(',')}]`, `W/"${version}-all-${latest}"`, version, parts.length);
        if (answers.size >= 10_000) answers.clear();
        answers.set(key, answer);
      }
      return answer;
    },

    /** The structured rate object of a country on a date, for other modules (validate, decide). */
    rateObject(code: string, date: string): CountryRateObject | null {
      const key = `${code}|${date}`;
      let object = objects.get(key);
      if (object === undefined) {
        const country = byCode.get(code.toLowerCase());
        if (!country) return null;
        const period = ratesOn(country, date);
        object = period ? deepFreeze(toObject(country, period, date)) : null;
        if (objects.size >= 50_000) objects.clear();
        objects.set(key, object);
      }
      return object;
    },
  };
}

export type RatesService = ReturnType<typeof createRatesService>;
