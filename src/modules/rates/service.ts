import type { Clock } from '../../lib/clock.js';
import { isoDate } from '../../lib/clock.js';
import { deepFreeze } from '../../lib/freeze.js';
import { type CountryRates, type RatePeriod, type RatesDataset, ratesOn } from './dataset.js';

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
  } | null;
  updated_at: string;
}

/** A rates answer, pre-serialised: the JSON of `data`, its length in UTF-8 bytes, and its entity tag. */
export interface RatesAnswer {
  json: string;
  bytes: number;
  etag: string;
  /** For the list: the number of countries in it (`meta.count`). */
  count?: number;
}

function answerOf(json: string, etag: string, count?: number): RatesAnswer {
  return { json, bytes: Buffer.byteLength(json), etag, ...(count !== undefined ? { count } : {}) };
}

export type RatesLookup =
  | { kind: 'found'; answer: RatesAnswer }
  | { kind: 'unknown_country' }
  | { kind: 'no_rates_on_date'; firstDate: string };

function toObject(country: CountryRates, period: RatePeriod): CountryRateObject {
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
      ? { domestic: t.domestic, distance_selling: t.distance_selling, currency: t.currency }
      : null,
    updated_at: country.updated_at,
  };
}

/**
 * Rates reference data, loaded in-process. Answers are serialised once per (country, period) and
 * reused, so a rates request costs a map look-up.
 */
export function createRatesService(deps: { dataset: RatesDataset; clock: Clock }) {
  const { dataset, clock } = deps;
  const byCode = new Map(dataset.countries.map((c) => [c.country_code, c]));
  const sorted = [...dataset.countries].sort((a, b) => a.country_code.localeCompare(b.country_code));
  const answers = new Map<string, RatesAnswer>();
  // Today's date string, recomputed only when the day changes (rates requests are hot).
  let today = '';
  let tomorrowStartsAt = 0;
  function currentDay(): string {
    const now = clock.millis();
    if (now >= tomorrowStartsAt || now < tomorrowStartsAt - 86_400_000) {
      today = isoDate(new Date(now));
      tomorrowStartsAt = Date.parse(`${today}T00:00:00.000Z`) + 86_400_000;
      todays.clear();
    }
    return today;
  }
  /** Answers by country and day, so a request for a past or future day is one map look-up. */
  const byDay = new Map<string, RatesLookup>();
  /** Today's answers by the code as asked, so the commonest request builds no key. */
  const todays = new Map<string, RatesLookup>();
  /**
   * Rate objects by code and day, shared and frozen: a decision asks for the same two countries' up
   * to six times (rates, names), and building each anew was 4% of a decide call's CPU profile.
   */
  const objects = new Map<string, CountryRateObject | null>();

  function lookup(code: string, day: string): RatesLookup {
    const country = byCode.get(code.toLowerCase());
    if (!country) return { kind: 'unknown_country' };
    const period = ratesOn(country, day);
    return period
      ? { kind: 'found', answer: countryAnswer(country, period) }
      : { kind: 'no_rates_on_date', firstDate: country.periods[0]?.from ?? '' };
  }

  /** Memoises answers for known countries, bounded: one entry per spelling of a code and day asked for. */
  function remember(cache: Map<string, RatesLookup>, key: string, answer: RatesLookup): RatesLookup {
    if (answer.kind === 'unknown_country') return answer;
    if (cache.size >= 50_000) cache.clear();
    cache.set(key, answer);
    return answer;
  }

  function countryAnswer(country: CountryRates, period: RatePeriod): RatesAnswer {
    const key = `${country.country_code}|${period.from}`;
    let answer = answers.get(key);
    if (!answer) {
      answer = answerOf(
        JSON.stringify(toObject(country, period)),
        `W/"${dataset.data_version}-${country.country_code}-${period.from}"`,
      );
      answers.set(key, answer);
    }
    return answer;
  }

  return {
    dataVersion: dataset.data_version,

    /** Rates of one country in force on `date` (default: today). `code` is matched case-insensitively. */
    country(code: string, date?: string): RatesLookup {
      const day = currentDay();
      if (date === undefined || date === day) {
        return todays.get(code) ?? remember(todays, code, lookup(code, day));
      }
      const key = `${code}|${date}`;
      return byDay.get(key) ?? remember(byDay, key, lookup(code, date));
    },

    /** Every country's rates in force on `date` (default: today); countries without rates that day are left out. */
    list(date?: string): RatesAnswer {
      const day = date ?? currentDay();
      const key = `*|${day}`;
      let answer = answers.get(key);
      if (!answer) {
        const parts: string[] = [];
        const froms: string[] = [];
        for (const country of sorted) {
          const period = ratesOn(country, day);
          if (!period) continue;
          parts.push(countryAnswer(country, period).json);
          froms.push(period.from);
        }
        const latest = froms.sort().at(-1) ?? 'none';
        answer = answerOf(`[${parts.join(',')}]`, `W/"${dataset.data_version}-all-${latest}"`, parts.length);
        if (answers.size < 10_000) answers.set(key, answer);
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
        object = period ? deepFreeze(toObject(country, period)) : null;
        if (objects.size >= 50_000) objects.clear();
        objects.set(key, object);
      }
      return object;
    },
  };
}

export type RatesService = ReturnType<typeof createRatesService>;
