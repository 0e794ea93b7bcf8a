import { readFileSync } from 'node:fs';
import { isDate, nextDate } from '../../lib/dates.js';
import { amount, asObject, checkKeys, currencyCode, date, fail, rate, str } from './dataset-fields.js';

/** A public source consulted for a country row. */
export interface RateSource {
  title: string;
  url: string;
  /** Date `YYYY-MM-DD` the source was last checked. */
  checked: string;
}

/** Rates in force over a closed (or, for the last one, open) range of days. Percentages: 19 means 19%. */
export interface RatePeriod {
  /** First day in force, `YYYY-MM-DD`. */
  from: string;
  /** Last day in force, `YYYY-MM-DD`; null for the period still in force. */
  to: string | null;
  standard_rate: number;
  /** Strictly ascending; excludes 0 and the super-reduced rate. */
  reduced_rates: number[];
  super_reduced_rate: number | null;
  parking_rate: number | null;
}

export interface RegistrationThreshold {
  /** Turnover above which a seller based in the country must register; null when VAT is due from the first sale. */
  domestic: number | null;
  /** EU-wide OSS B2C distance-selling threshold (always in EUR); null outside the EU VAT area. */
  distance_selling: number | null;
  /** ISO 4217 currency of `domestic`. */
  currency: string;
  /**
   * Sales to consumers in the country above which a seller established abroad must register to
   * charge its VAT/GST on digital services, as the country publishes it; `amount` 0 when
   * registration is due from the first sale. Null when not tracked (absent in the file).
   */
  non_resident: NonResidentThreshold | null;
}

export interface NonResidentThreshold {
  amount: number;
  /** ISO 4217 currency of `amount`, as the country publishes the threshold. */
  currency: string;
}

/** A region's own rate over a closed (or, for the last one, open) range of days. */
export interface RegionPeriod {
  from: string;
  to: string | null;
  /** The rate a seller charges there: for a Canadian HST province, the harmonized rate (federal part included). */
  standard_rate: number;
}

/** A part of a country where a different rate applies (Canada's HST provinces). */
export interface RegionRates {
  /** ISO 3166-2 subdivision code, lower case (`ca-on`). */
  code: string;
  name: string;
  vat_name: string;
  vat_abbr: string;
  /** Oldest first, contiguous; the last period has `to: null`. */
  periods: RegionPeriod[];
}

export interface CountryRates {
  /** ISO 3166-1 alpha-2, lowercase (`xi` for Northern Ireland, `gr` for Greece). */
  country_code: string;
  country_name: string;
  country_name_local: string;
  /** ISO 4217 currency used for invoicing. */
  currency: string;
  is_eu_member: boolean;
  vat_name: string;
  vat_abbr: string;
  vat_number_format: string;
  /** Anchored regex for the normalised number (prefix + national part, no spaces). */
  vat_number_regex: string;
  registration_threshold: RegistrationThreshold | null;
  /** Date `YYYY-MM-DD` the row was last verified. */
  updated_at: string;
  sources: RateSource[];
  notes?: string;
  /** Regions with their own rate; empty for most countries (absent in the file). */
  regions: RegionRates[];
  /** Rate history, oldest first, contiguous; the last period has `to: null`. */
  periods: RatePeriod[];
}

export interface RatesDataset {
  /** Date `YYYY-MM-DD` of the dataset. */
  data_version: string;
  countries: CountryRates[];
}

function parseSource(value: unknown, path: string): RateSource {
  const obj = asObject(value, path);
  checkKeys(obj, path, ['title', 'url', 'checked']);
  const url = str(obj, 'url', path);
  if (!/^https?:\/\/\S+$/.test(url)) fail(`${path}.url`, 'must be an http(s) URL');
  return { title: str(obj, 'title', path), url, checked: date(obj, 'checked', path) };
}

function parseThreshold(value: unknown, path: string): RegistrationThreshold | null {
  if (value === null) return null;
  const obj = asObject(value, path);
  checkKeys(obj, path, ['domestic', 'distance_selling', 'currency'], ['non_resident']);
  return {
    domestic: amount(obj.domestic, `${path}.domestic`),
    distance_selling: amount(obj.distance_selling, `${path}.distance_selling`),
    currency: currencyCode(obj, 'currency', path),
    non_resident: parseNonResident(obj.non_resident ?? null, `${path}.non_resident`),
  };
}

function parseNonResident(value: unknown, path: string): NonResidentThreshold | null {
  if (value === null) return null;
  const obj = asObject(value, path);
  checkKeys(obj, path, ['amount', 'currency']);
  const limit = amount(obj.amount, `${path}.amount`);
  if (limit === null) fail(`${path}.amount`, 'must be a non-negative number (0: from the first sale)');
  return { amount: limit, currency: currencyCode(obj, 'currency', path) };
}

function parsePeriod(value: unknown, path: string): RatePeriod {
  const obj = asObject(value, path);
  checkKeys(obj, path, [
    'from',
    'to',
    'standard_rate',
    'reduced_rates',
    'super_reduced_rate',
    'parking_rate',
  ]);
  const { from, to } = parseRange(obj, path);
  const reducedRaw = obj.reduced_rates;
  if (!Array.isArray(reducedRaw)) fail(`${path}.reduced_rates`, 'must be an array');
  const reduced = reducedRaw.map((r, i) => rate(r, `${path}.reduced_rates[${i}]`, false) as number);
  for (let i = 1; i < reduced.length; i++) {
    if ((reduced[i] as number) <= (reduced[i - 1] as number)) {
      fail(`${path}.reduced_rates`, 'must be strictly ascending');
    }
  }
  return {
    from,
    to,
    standard_rate: rate(obj.standard_rate, `${path}.standard_rate`, false) as number,
    reduced_rates: reduced,
    super_reduced_rate: rate(obj.super_reduced_rate, `${path}.super_reduced_rate`, true),
    parking_rate: rate(obj.parking_rate, `${path}.parking_rate`, true),
  };
}

/** Checks that periods are sorted, contiguous and end with the one open period. */
function checkContiguous(periods: ReadonlyArray<{ from: string; to: string | null }>, path: string): void {
  for (let i = 0; i < periods.length; i++) {
    const cur = periods[i] as { from: string; to: string | null };
    const isLast = i === periods.length - 1;
    if (isLast && cur.to !== null) fail(`${path}[${i}].to`, 'the last period must be open (to: null)');
    if (!isLast && cur.to === null) fail(`${path}[${i}].to`, 'only the last period may be open (to: null)');
    if (i === 0) continue;
    const prev = periods[i - 1] as { from: string; to: string | null };
    const prevTo = prev.to as string;
    if (cur.from <= prev.from) {
      fail(`${path}[${i}].from`, `periods are not sorted: ${cur.from} is not after ${prev.from}`);
    }
    if (cur.from <= prevTo) {
      fail(`${path}[${i}].from`, `overlaps the previous period, which ends ${prevTo}`);
    }
    if (cur.from !== nextDate(prevTo)) {
      fail(`${path}[${i}].from`, `leaves a gap after the previous period, which ends ${prevTo}`);
    }
  }
}

function parseRange(obj: Record<string, unknown>, path: string): { from: string; to: string | null } {
  const from = date(obj, 'from', path);
  if (obj.to === null) return { from, to: null };
  const to = date(obj, 'to', path);
  if (to < from) fail(`${path}.to`, `ends (${to}) before it starts (${from})`);
  return { from, to };
}

function parsePeriods(value: unknown, path: string): RatePeriod[] {
  if (!Array.isArray(value) || value.length === 0) fail(path, 'must be a non-empty array');
  const periods = value.map((p, i) => parsePeriod(p, `${path}[${i}]`));
  checkContiguous(periods, path);
  return periods;
}

function parseRegion(value: unknown, path: string, countryCode: string): RegionRates {
  const obj = asObject(value, path);
  checkKeys(obj, path, ['code', 'name', 'vat_name', 'vat_abbr', 'periods']);
  const code = str(obj, 'code', path);
  if (!new RegExp(`^${countryCode}-[a-z0-9]{1,3}$`).test(code)) {
    fail(`${path}.code`, `must be an ISO 3166-2 code of the country in lower case, e.g. "${countryCode}-ab"`);
  }
  const raw = obj.periods;
  if (!Array.isArray(raw) || raw.length === 0) fail(`${path}.periods`, 'must be a non-empty array');
  const periods = raw.map((p, i): RegionPeriod => {
    const at = `${path}.periods[${i}]`;
    const period = asObject(p, at);
    checkKeys(period, at, ['from', 'to', 'standard_rate']);
    return {
      ...parseRange(period, at),
      standard_rate: rate(period.standard_rate, `${at}.standard_rate`, false) as number,
    };
  });
  checkContiguous(periods, `${path}.periods`);
  return {
    code,
    name: str(obj, 'name', path),
    vat_name: str(obj, 'vat_name', path),
    vat_abbr: str(obj, 'vat_abbr', path),
    periods,
  };
}

function parseRegions(value: unknown, path: string, countryCode: string): RegionRates[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail(path, 'must be an array');
  const regions = value.map((r, i) => parseRegion(r, `${path}[${i}]`, countryCode));
  const seen = new Set<string>();
  regions.forEach((r, i) => {
    if (seen.has(r.code)) fail(`${path}[${i}].code`, `duplicate region code "${r.code}"`);
    seen.add(r.code);
  });
  return regions;
}

const COUNTRY_FIELDS = [
  'country_code',
  'country_name',
  'country_name_local',
  'currency',
  'is_eu_member',
  'vat_name',
  'vat_abbr',
  'vat_number_format',
  'vat_number_regex',
  'registration_threshold',
  'updated_at',
  'sources',
  'periods',
] as const;

function parseCountry(value: unknown, index: number): CountryRates {
  let path = `countries[${index}]`;
  const obj = asObject(value, path);
  const code = obj.country_code;
  if (typeof code === 'string') path = `${path} (${code})`;
  checkKeys(obj, path, COUNTRY_FIELDS, ['notes', 'regions']);
  const countryCode = str(obj, 'country_code', path);
  if (!/^[a-z]{2}$/.test(countryCode)) fail(`${path}.country_code`, 'must be two lowercase letters');
  if (typeof obj.is_eu_member !== 'boolean') fail(`${path}.is_eu_member`, 'must be a boolean');

  const regex = str(obj, 'vat_number_regex', path);
  if (!regex.startsWith('^') || !regex.endsWith('$'))
    fail(`${path}.vat_number_regex`, 'must be anchored with ^ and $');
  try {
    new RegExp(regex);
  } catch (err) {
    fail(`${path}.vat_number_regex`, `does not compile: ${(err as Error).message}`);
  }

  const sourcesRaw = obj.sources;
  if (!Array.isArray(sourcesRaw) || sourcesRaw.length === 0)
    fail(`${path}.sources`, 'must be a non-empty array');
  const sources = sourcesRaw.map((s, i) => parseSource(s, `${path}.sources[${i}]`));

  const row: CountryRates = {
    country_code: countryCode,
    country_name: str(obj, 'country_name', path),
    country_name_local: str(obj, 'country_name_local', path),
    currency: currencyCode(obj, 'currency', path),
    is_eu_member: obj.is_eu_member,
    vat_name: str(obj, 'vat_name', path),
    vat_abbr: str(obj, 'vat_abbr', path),
    vat_number_format: str(obj, 'vat_number_format', path),
    vat_number_regex: regex,
    registration_threshold: parseThreshold(obj.registration_threshold, `${path}.registration_threshold`),
    updated_at: date(obj, 'updated_at', path),
    sources,
    regions: parseRegions(obj.regions, `${path}.regions`, countryCode),
    periods: parsePeriods(obj.periods, `${path}.periods`),
  };
  if (Object.hasOwn(obj, 'notes')) row.notes = str(obj, 'notes', path);
  return row;
}

/** Validates an already-decoded JSON value strictly and returns a typed copy; throws an Error naming the bad field. */
export function parseRatesDataset(json: unknown): RatesDataset {
  const root = asObject(json, '(root)');
  checkKeys(root, '(root)', ['data_version', 'countries']);
  const dataVersion = date(root, 'data_version', '(root)');
  if (!Array.isArray(root.countries) || root.countries.length === 0) {
    fail('countries', 'must be a non-empty array');
  }
  const countries = root.countries.map((c, i) => parseCountry(c, i));
  const seen = new Set<string>();
  countries.forEach((c, i) => {
    if (seen.has(c.country_code))
      fail(`countries[${i}].country_code`, `duplicate country code "${c.country_code}"`);
    seen.add(c.country_code);
  });
  return { data_version: dataVersion, countries };
}

/** Reads, decodes and validates the dataset file at `path`. */
export function loadRatesDataset(path: string): RatesDataset {
  const text = readFileSync(path, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`rates dataset: ${path} is not valid JSON: ${(err as Error).message}`);
  }
  return parseRatesDataset(json);
}

/** Each region's rate in force on `date` (`YYYY-MM-DD`), with the region; regions without a rate that day are left out. */
export function regionsOn(
  country: CountryRates,
  date: string,
): Array<{ region: RegionRates; period: RegionPeriod }> {
  const found: Array<{ region: RegionRates; period: RegionPeriod }> = [];
  for (const region of country.regions) {
    const period = region.periods.find((p) => date >= p.from && (p.to === null || date <= p.to));
    if (period) found.push({ region, period });
  }
  return found;
}

/** The period in force on `date` (`YYYY-MM-DD`), or null before the first period. */
export function ratesOn(country: CountryRates, date: string): RatePeriod | null {
  if (!isDate(date)) throw new Error(`ratesOn: "${date}" is not a valid date YYYY-MM-DD`);
  for (const period of country.periods) {
    if (date >= period.from && (period.to === null || date <= period.to)) return period;
  }
  return null;
}
