/**
 * The one parser of calendar dates (`YYYY-MM-DD`) for the whole service: request fields, the rates
 * dataset and rate look-ups all go through it. `Date.UTC` reads years 0–99 as 1900–1999, so nothing
 * here builds a date from a year without `setUTCFullYear`, and dates before 1900 are out of range
 * anyway (no VAT rate or registry answer is that old).
 */

export const MIN_DATE = '1900-01-01';
export const MAX_DATE = '9999-12-31';

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

export type DateCheck = { ok: true; date: string } | { ok: false; reason: 'format' | 'range' };

/** Milliseconds since the epoch of a UTC day, for any year (no 0–99 offset). */
function utcDay(year: number, month: number, day: number): number {
  const at = new Date(0);
  at.setUTCFullYear(year, month - 1, day);
  return at.getTime();
}

/** Whether `value` is a real calendar date `YYYY-MM-DD` between `MIN_DATE` and `MAX_DATE`. */
export function checkDate(value: string): DateCheck {
  const m = DATE_RE.exec(value);
  if (!m) return { ok: false, reason: 'format' };
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const at = new Date(utcDay(year, month, day));
  if (at.getUTCFullYear() !== year || at.getUTCMonth() !== month - 1 || at.getUTCDate() !== day) {
    return { ok: false, reason: 'format' };
  }
  if (value < MIN_DATE || value > MAX_DATE) return { ok: false, reason: 'range' };
  return { ok: true, date: value };
}

export function isDate(value: unknown): value is string {
  return typeof value === 'string' && checkDate(value).ok;
}

/** The message of a refused date field, the same for every field of the API. */
export function dateProblem(field: string, check: Extract<DateCheck, { ok: false }>): string {
  return check.reason === 'range'
    ? `${field} must be between ${MIN_DATE} and ${MAX_DATE}.`
    : `${field} must be a calendar date in the form YYYY-MM-DD, between ${MIN_DATE} and ${MAX_DATE}.`;
}

/** The day after a valid date. */
export function nextDate(date: string): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(utcDay(y, m, d + 1)).toISOString().slice(0, 10);
}

// ---------------------------------------------------------------------------------------------
// Wall-clock time in a time zone (eVatR speaks German local time, the national registers their own)
// ---------------------------------------------------------------------------------------------

/**
 * The zone rules come from the runtime's time-zone data through `Intl.DateTimeFormat`; one
 * formatter is built per zone, once. No caller is on a hot path (one call per registry answer, or
 * per simulated answer), so nothing here is hand-rolled.
 */
const zoneFormats = new Map<string, Intl.DateTimeFormat>();

function zoneFormat(timeZone: string): Intl.DateTimeFormat {
  let format = zoneFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    zoneFormats.set(timeZone, format);
  }
  return format;
}

/** A wall-clock time in a time zone, to the second, and the zone's offset from UTC at that moment. */
export interface ZoneWallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** Minutes east of UTC at that instant (Berlin: 60 in winter, CET; 120 in summer, CEST). */
  offsetMinutes: number;
}

/** The wall-clock time of an instant (milliseconds since the epoch, or a `Date`) in a time zone (`Europe/Warsaw`, …). */
export function zoneWallTime(timeZone: string, instant: Date | number): ZoneWallTime {
  const ms = typeof instant === 'number' ? instant : instant.getTime();
  const parts: Record<string, number> = {};
  for (const p of zoneFormat(timeZone).formatToParts(ms)) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  const year = parts.year ?? 1970;
  const month = parts.month ?? 1;
  const day = parts.day ?? 1;
  const hour = parts.hour ?? 0;
  const minute = parts.minute ?? 0;
  const second = parts.second ?? 0;
  const wallAsUtc = utcDay(year, month, day) + ((hour * 60 + minute) * 60 + second) * 1000;
  const offsetMinutes = Math.round((wallAsUtc - Math.floor(ms / 1000) * 1000) / 60_000);
  return { year, month, day, hour, minute, second, offsetMinutes };
}

/** The calendar day of a wall-clock time, `YYYY-MM-DD`. */
export function wallDate(wall: ZoneWallTime): string {
  return `${String(wall.year).padStart(4, '0')}-${String(wall.month).padStart(2, '0')}-${String(wall.day).padStart(2, '0')}`;
}

/**
 * The instant of a wall-clock time in a time zone, given as the milliseconds the same fields would
 * have in UTC (`Date.UTC(y, m - 1, d, h, mi, s, ms)`). The zone's offset is looked up an hour
 * earlier first and then at the instant that guess gives, which settles both daylight-saving
 * switches: a time inside the spring gap (Berlin: 02:00–03:00 on the last Sunday of March) is read
 * with the winter offset, so 02:30 is 01:30Z (03:30 summer time); a time in the autumn hour that
 * happens twice (02:00–03:00 on the last Sunday of October) is the second, winter-time one.
 */
export function zoneWallTimeToInstant(timeZone: string, wallAsUtcMs: number): number {
  const guess = zoneWallTime(timeZone, wallAsUtcMs - 60 * 60_000).offsetMinutes;
  const offset = zoneWallTime(timeZone, wallAsUtcMs - guess * 60_000).offsetMinutes;
  return wallAsUtcMs - offset * 60_000;
}

/** A wall-clock time in Berlin, to the second, and Berlin's offset from UTC at that moment. */
export type BerlinWallTime = ZoneWallTime;

/** The Berlin wall-clock time of an instant (milliseconds since the epoch, or a `Date`). */
export function berlinWallTime(instant: Date | number): BerlinWallTime {
  return zoneWallTime('Europe/Berlin', instant);
}

/** The instant of a Berlin wall-clock time (see `zoneWallTimeToInstant`). */
export function berlinWallTimeToInstant(wallAsUtcMs: number): number {
  return zoneWallTimeToInstant('Europe/Berlin', wallAsUtcMs);
}
