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
